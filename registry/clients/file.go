// Package clients reads, checks and watches a bridge's clients file: its
// named clients, each with the hash of its bearer token and a policy that
// narrows what the bridge's own flags allow (the tools it sees, read-only,
// what asks first, its limits). A Set serves the file: it resolves a
// token to its client with one map lookup and one SHA-256, keeps the
// last good file when an edit breaks it, and follows edits within a
// second. Only the command line writes the file (File.Save); a bridge
// never does.
//
// The format is manifest/clients.schema.json (manifest.ClientsSchemaJSON);
// docs/clients.md explains it.
package clients

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/registry"
)

// SchemaURL is the $schema a file written by Save names.
const SchemaURL = "https://github.com/tairseach/tairseach-mcp/manifest/clients.schema.json"

// File is a clients file as it is written: the clients by name.
type File struct {
	Schema  string            `json:"$schema,omitzero"`
	Clients map[string]*Entry `json:"clients"`
}

// Entry is one client in the file.
type Entry struct {
	Token   TokenHash `json:"token"`
	Policy  Policy    `json:"policy,omitzero"`
	Created string    `json:"created,omitzero"`
	Rotated string    `json:"rotated,omitzero"`
}

// TokenHash is what the file keeps of a client's token: its public id,
// which selects the client, and the SHA-256 of the whole token. A token
// is 128 random bits: no key derivation is needed to make a hash of it
// hard to reverse, as it would be for a password a person chose.
type TokenHash struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
}

// Policy is a client's policy as the file writes it (see
// manifest/clients.schema.json). The zero value narrows nothing.
type Policy struct {
	Include            []string `json:"include,omitzero"`
	Exclude            []string `json:"exclude,omitzero"`
	ReadOnly           bool     `json:"readOnly,omitzero"`
	Confirm            []string `json:"confirm,omitzero"`
	ConfirmUnsupported string   `json:"confirmUnsupported,omitzero"` // "", "allow", "page" or "deny"
	MaxInFlight        int      `json:"maxInFlight,omitzero"`
	CallsPerMinute     int      `json:"callsPerMinute,omitzero"`
	// Sampling and Elicitation, when false, forbid the backend to ask
	// the client's model for completions, or its user questions, during
	// a call; nil allows it.
	Sampling    *bool `json:"sampling,omitzero"`
	Elicitation *bool `json:"elicitation,omitzero"`
}

// Registry returns the part of p that narrows a registry, for the client
// name.
func (p *Policy) Registry(name string) *registry.Policy {
	return &registry.Policy{
		Client:      name,
		Filter:      registry.Filter{Include: p.Include, Exclude: p.Exclude, ReadOnly: p.ReadOnly},
		Confirm:     p.Confirm,
		DenyUnasked: p.ConfirmUnsupported == "deny",
	}
}

// Check returns an error naming what is wrong with p: a malformed glob,
// a value out of range.
func (p *Policy) Check() error {
	switch p.ConfirmUnsupported {
	case "", "allow", "page", "deny":
	default:
		return fmt.Errorf("confirmUnsupported is allow, page or deny, not %q", p.ConfirmUnsupported)
	}
	if p.MaxInFlight < 0 || p.CallsPerMinute < 0 {
		return errors.New("maxInFlight and callsPerMinute are at least 1 when set")
	}
	return p.Registry("").Check()
}

// Summary says in a few words what p allows, for a person.
func (p *Policy) Summary() string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if p.ReadOnly {
		add("read-only")
	}
	if len(p.Include) > 0 {
		add("include %s", strings.Join(p.Include, ","))
	}
	if len(p.Exclude) > 0 {
		add("exclude %s", strings.Join(p.Exclude, ","))
	}
	if len(p.Confirm) > 0 {
		add("confirm %s", strings.Join(p.Confirm, ","))
	}
	if p.ConfirmUnsupported == "deny" || p.ConfirmUnsupported == "page" {
		add("confirm-unsupported %s", p.ConfirmUnsupported)
	}
	if p.MaxInFlight > 0 {
		add("max %d in flight", p.MaxInFlight)
	}
	if p.CallsPerMinute > 0 {
		add("%d calls a minute", p.CallsPerMinute)
	}
	if p.Sampling != nil && !*p.Sampling {
		add("no sampling")
	}
	if p.Elicitation != nil && !*p.Elicitation {
		add("no elicitation")
	}
	if len(parts) == 0 {
		return "every right of the bridge"
	}
	return strings.Join(parts, "; ")
}

// nameRE is what a client's name may be: it is written in the audit log
// (client:NAME) and on command lines.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckName returns an error when name cannot name a client.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("client name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// Token format: tsk_<id>_<secret>, id 8 hex digits (public, it selects
// the client), secret 32 hex digits (128 random bits).
const (
	tokenPrefix = "tsk_"
	idLen       = 8
	secretLen   = 32
	tokenLen    = len(tokenPrefix) + idLen + 1 + secretLen
)

// newToken returns a new token, whose id is none of taken, and its hash.
func newToken(taken func(id string) bool) (string, TokenHash) {
	for {
		var b [4 + 16]byte
		rand.Read(b[:]) // never fails
		id := hex.EncodeToString(b[:4])
		if taken(id) {
			continue
		}
		token := tokenPrefix + id + "_" + hex.EncodeToString(b[4:])
		sum := sha256.Sum256([]byte(token))
		return token, TokenHash{ID: id, SHA256: hex.EncodeToString(sum[:])}
	}
}

// tokenID returns the id of a token of our format, or false.
func tokenID(token string) (string, bool) {
	if len(token) != tokenLen || !strings.HasPrefix(token, tokenPrefix) || token[len(tokenPrefix)+idLen] != '_' {
		return "", false
	}
	return token[len(tokenPrefix) : len(tokenPrefix)+idLen], true
}

// Matches reports whether token is the one h is the hash of, comparing
// the digests in constant time.
func (h TokenHash) Matches(token string) bool {
	id, ok := tokenID(token)
	want, err := hex.DecodeString(h.SHA256)
	if !ok || id != h.ID || err != nil {
		return false
	}
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], want) == 1
}

// Problem is one thing wrong with a clients file: where (a JSON path,
// "" for the whole file) and what.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// FileError is the error of a clients file that cannot be served: each
// of its problems.
type FileError struct {
	Path     string
	Problems []Problem
}

func (e *FileError) Error() string {
	var parts []string
	for i, p := range e.Problems {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Problems)-i))
			break
		}
		parts = append(parts, p.String())
	}
	return e.Path + ": " + strings.Join(parts, "; ")
}

// Read reads and checks the clients file at path, as a bridge serves it:
// a regular file, that only its owner may read (mode 0600 or narrower),
// that fits the format and names each token id once, with well-formed
// globs. A file that is not there is an error wrapping fs.ErrNotExist; a
// file with problems a *FileError listing them.
func Read(path string) (*File, error) {
	data, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data)
}

// readPrivate reads the file at path, refusing anything but a regular
// file, and one others may read or write.
func readPrivate(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &FileError{Path: path, Problems: []Problem{{Message: "not a regular file"}}}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &FileError{Path: path, Problems: []Problem{{Message: fmt.Sprintf(
			"others may read it (mode %#o), and it names who may use the bridge: chmod 600 %s", fi.Mode().Perm(), path)}}}
	}
	return os.ReadFile(path)
}

// parse checks and decodes a clients file's contents.
func parse(path string, data []byte) (*File, error) {
	fail := func(ps ...Problem) (*File, error) { return nil, &FileError{Path: path, Problems: ps} }
	vs, err := manifest.CheckClients(data)
	if err != nil {
		return fail(Problem{Message: "not a clients file: " + err.Error()})
	}
	if len(vs) > 0 {
		var ps []Problem
		for _, v := range vs {
			ps = append(ps, Problem{Path: v.Path(), Message: v.Message})
		}
		return fail(ps...)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return fail(Problem{Message: "cannot decode: " + err.Error()})
	}
	var ps []Problem
	ids := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(f.Clients)) {
		e := f.Clients[name]
		at := "clients." + name
		if other, dup := ids[e.Token.ID]; dup {
			ps = append(ps, Problem{Path: at + ".token.id", Message: fmt.Sprintf("the token id %s is %s's too: rotate one of them", e.Token.ID, other)})
		}
		ids[e.Token.ID] = name
		if err := e.Policy.Check(); err != nil {
			ps = append(ps, Problem{Path: at + ".policy", Message: err.Error()})
		}
	}
	if len(ps) > 0 {
		return fail(ps...)
	}
	if f.Clients == nil {
		f.Clients = map[string]*Entry{}
	}
	return &f, nil
}

// Load reads the clients file at path for the command line to change: as
// Read does, but a file that is not there is an empty one, and one others
// may read is read all the same (Save makes it 0600).
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Clients: map[string]*Entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return parse(path, data)
}

// Save writes f to path, mode 0600, atomically: a bridge watching the
// file reads the old one or the new one, never a part. The folder is
// made 0700 when it is missing.
func (f *File) Save(path string) error {
	f.Schema = SchemaURL
	data, err := json.Marshal(f, json.Deterministic(true), jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // made 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	_, err = tmp.Write(data)
	if err = errors.Join(err, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Add adds a client called name with policy p, and returns its token,
// which the file does not keep: whoever adds it must give it to the
// client now.
func (f *File) Add(name string, p Policy, now time.Time) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	if err := p.Check(); err != nil {
		return "", err
	}
	if _, ok := f.Clients[name]; ok {
		return "", fmt.Errorf("there is a client %q already: remove it first, or rotate its token", name)
	}
	token, h := newToken(f.idTaken)
	f.Clients[name] = &Entry{Token: h, Policy: p, Created: now.UTC().Format(time.RFC3339)}
	return token, nil
}

// Rotate gives the client name a new token, which it returns; the old
// one stops working as soon as a bridge reads the file.
func (f *File) Rotate(name string, now time.Time) (string, error) {
	e, ok := f.Clients[name]
	if !ok {
		return "", f.unknown(name)
	}
	token, h := newToken(f.idTaken)
	e.Token, e.Rotated = h, now.UTC().Format(time.RFC3339)
	return token, nil
}

// Remove removes the client name.
func (f *File) Remove(name string) error {
	if _, ok := f.Clients[name]; !ok {
		return f.unknown(name)
	}
	delete(f.Clients, name)
	return nil
}

// Owner returns the name of the client whose token this is, or false.
func (f *File) Owner(token string) (string, bool) {
	for name, e := range f.Clients {
		if e.Token.Matches(token) {
			return name, true
		}
	}
	return "", false
}

func (f *File) idTaken(id string) bool {
	for _, e := range f.Clients {
		if e.Token.ID == id {
			return true
		}
	}
	return false
}

// Names returns the clients' names, sorted.
func (f *File) Names() []string { return slices.Sorted(maps.Keys(f.Clients)) }

func (f *File) unknown(name string) error {
	if len(f.Clients) == 0 {
		return fmt.Errorf("no client %q: the file has none", name)
	}
	return fmt.Errorf("no client %q; the clients are %s", name, strings.Join(f.Names(), ", "))
}
