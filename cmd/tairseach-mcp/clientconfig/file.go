package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// jsonObject is a JSON object whose members keep their order and their
// values as written, so that a client's file comes back with everything
// the bridge does not know untouched.
type jsonObject []jsonMember

type jsonMember struct {
	name  string
	value jsontext.Value
}

// index returns the position of the member name, or -1. Names are
// unique: the decoder refuses duplicates.
func (o jsonObject) index(name string) int {
	return slices.IndexFunc(o, func(m jsonMember) bool { return m.name == name })
}

func (o jsonObject) get(name string) (jsontext.Value, bool) {
	if i := o.index(name); i >= 0 {
		return o[i].value, true
	}
	return nil, false
}

// set replaces a member where it stands, or appends it.
func (o *jsonObject) set(name string, v jsontext.Value) {
	if i := o.index(name); i >= 0 {
		(*o)[i].value = v
		return
	}
	*o = append(*o, jsonMember{name, v})
}

func (o *jsonObject) remove(name string) {
	if i := o.index(name); i >= 0 {
		*o = slices.Delete(*o, i, i+1)
	}
}

func (o jsonObject) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, m := range o {
		if err := enc.WriteToken(jsontext.String(m.name)); err != nil {
			return err
		}
		if err := enc.WriteValue(m.value); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

func (o *jsonObject) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken() // a syntax error here is reported as such
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return &json.SemanticError{JSONKind: tok.Kind()}
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		*o = append(*o, jsonMember{name, v.Clone()})
	}
	_, err = dec.ReadToken()
	return err
}

// File is a client's configuration file as read.
type File struct {
	Path    string // symbolic links resolved
	data    []byte
	perm    fs.FileMode
	existed bool
	top     jsonObject
	servers jsonObject // the member c.key of top
}

// Read reads c's file on m. A file that does not exist or holds only
// whitespace is an empty object. Comments (VS Code allows them) and
// anything else that is not JSON are refused, and the file left as it is.
func (c Client) Read(m Machine) (*File, error) {
	_, path := c.paths(m)
	// Write through a symbolic link (a dotfiles checkout), not over it.
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	f := &File{Path: path, perm: 0o600}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil {
		f.perm = fi.Mode().Perm()
	}
	f.data, f.existed = data, true
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	var se *jsontext.SyntacticError
	err = json.Unmarshal(data, &f.top)
	switch {
	case errors.As(err, &se) && se.ByteOffset < int64(len(data)) && data[se.ByteOffset] == '/':
		return nil, fmt.Errorf("%s has comments (line %d), which install would lose: remove them, or add the server by hand (see docs/clients.md)", path, lineOf(data, se.ByteOffset))
	case errors.As(err, &se):
		return nil, fmt.Errorf("%s is not valid JSON (line %d: %v): fix it, or move it aside, and run install again", path, lineOf(data, se.ByteOffset), se.Err)
	case err != nil:
		return nil, fmt.Errorf("%s does not hold a JSON object: fix it, or move it aside, and run install again", path)
	}
	if v, ok := f.top.get(c.key); ok && json.Unmarshal(v, &f.servers) != nil {
		return nil, fmt.Errorf("%s: %q is not an object of servers: fix it by hand", path, c.key)
	}
	return f, nil
}

// Server returns the entry of the server name, as written.
func (f *File) Server(name string) (jsontext.Value, bool) { return f.servers.get(name) }

func lineOf(data []byte, offset int64) int {
	return bytes.Count(data[:min(offset, int64(len(data)))], []byte("\n")) + 1
}

// encode returns the file with f.servers in place, indented as the
// file was (VS Code writes tabs, most others two spaces), strings
// escaped as they were.
func (f *File) encode(c Client) ([]byte, error) {
	servers, err := json.Marshal(f.servers, jsontext.PreserveRawStrings(true))
	if err != nil {
		return nil, err
	}
	f.top.set(c.key, servers)
	indent := "  "
	if _, rest, ok := bytes.Cut(f.data, []byte("\n")); ok {
		if ws := rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))]; len(ws) > 0 {
			indent = string(ws)
		}
	}
	out, err := json.Marshal(f.top, jsontext.WithIndent(indent), jsontext.PreserveRawStrings(true))
	return append(out, '\n'), err
}

// write replaces the file atomically with data, with the old file's
// permissions (0600 for a new one: other servers' entries may carry
// secrets in env), and keeps the old one as FILE.bak, which it returns.
func (f *File) write(data []byte) (backup string, err error) {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return "", err
	}
	if f.existed {
		backup = f.Path + ".bak"
		if err := writeAtomic(backup, f.data, f.perm); err != nil {
			return "", err
		}
	}
	return backup, writeAtomic(f.Path, data, f.perm)
}

// writeAtomic writes a temporary file in the same folder and renames it
// over path, so that a client never reads half a file.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	_, err = tmp.Write(data)
	if err = errors.Join(err, tmp.Chmod(perm), tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
