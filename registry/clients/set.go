package clients

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
)

// Options configure a Set. Registry is required; the zero value of each
// other field means its default.
type Options struct {
	// Registry is what each client's view narrows.
	Registry *registry.Registry
	// Search, when set (--tool-mode search), makes the tools of each
	// client a search over its view.
	Search *registry.Search
	// Now is the clock of the clients' rates (default time.Now).
	Now func() time.Time
	// Logger receives the set's logs; nil means none.
	Logger *zerolog.Logger
	// OnChange, when set, is told what each new version of the file
	// changed, once it is served. Calls are serialised; it must not call
	// Reload.
	OnChange func(Change)
	// Debounce is how long Watch waits for events to stop before it reads
	// the file again (default 100 ms).
	Debounce time.Duration
	// Owner answers, for a client whose policy says confirmUnsupported
	// page, the questions for the user that its client cannot ask (the
	// owner's console). It must be set for such a policy to be served:
	// without it their questions are refused (see protocol.Owner).
	Owner protocol.Owner
}

// noConsole answers for a client whose policy sends its questions to
// the owner's console, in a bridge that serves none: the owner is away.
type noConsole struct{}

func (noConsole) Ask(context.Context, *protocol.Call, protocol.OwnerQuestion) (jsontext.Value, error) {
	return nil, fmt.Errorf("%w: this bridge serves no console (over stdio, start it with --ui 127.0.0.1:0)", protocol.ErrOwnerAway)
}

// Change is what a new version of the clients file changed.
type Change struct {
	// Revoked are the clients removed, or whose token was replaced:
	// their sessions should end. Each one's Revoked channel is closed.
	Revoked []*Client
	// Lists is true when what some client sees may have changed (a policy
	// edited, a client added): sessions should list again.
	Lists bool
}

// Set serves a clients file: the clients of its last good version, by
// token and by name. Its methods are safe for concurrent use.
type Set struct {
	path string
	opts Options
	log  zerolog.Logger
	cur  atomic.Pointer[table]

	reload  sync.Mutex // serialises Reload; guards lastErr
	lastErr string     // the last error reading the file, logged once
}

// table is one version of the file, as served: immutable.
type table struct {
	named  bool // the file exists: requests need a token
	byID   map[string]*Client
	byName map[string]*Client
}

// Client is a named client as a bridge serves it: who it is, the view its
// sessions serve and its limits. It is immutable but for its rate, which
// its calls draw on, and safe for concurrent use.
type Client struct {
	name      string
	principal protocol.Principal
	sum       [sha256.Size]byte // of its token
	entry     Entry
	policy    []byte // entry.Policy as JSON, to tell a change
	view      *registry.View
	session   protocol.SessionOptions
	bucket    *bucket // nil without a rate
	revoked   chan struct{}
}

// Name returns the client's name in the file.
func (c *Client) Name() string { return c.name }

// Principal returns who the client's requests are for: client:NAME.
func (c *Client) Principal() protocol.Principal { return c.principal }

// Policy returns the client's policy as the file has it.
func (c *Client) Policy() Policy { return c.entry.Policy }

// View returns the client's view of the registry.
func (c *Client) View() *registry.View { return c.view }

// Session returns the options of a session of the client: its principal,
// what it serves (its view), and what its policy forbids its calls to
// ask. Transport and Admit are the transport's to set.
func (c *Client) Session() protocol.SessionOptions { return c.session }

// Admit takes n calls from the client's rate, and reports true; or, when
// the client is over its rate, takes none and returns how long until it
// may make them. A client without a rate is always admitted.
func (c *Client) Admit(n int) (retryAfter time.Duration, ok bool) {
	if c.bucket == nil {
		return 0, true
	}
	return c.bucket.take(n)
}

// MaxInFlight returns the most calls the client may run at once; 0 for
// no limit of its own.
func (c *Client) MaxInFlight() int { return c.entry.Policy.MaxInFlight }

// Revoked returns a channel closed once the client is removed from the
// file, or its token replaced: its sessions should end.
func (c *Client) Revoked() <-chan struct{} { return c.revoked }

// Open reads the clients file at path and returns the Set that serves
// it. A file that is not there is no error: the set has no clients, and
// Named reports false, until one appears. A file that cannot be served is
// an error (see Read).
func Open(path string, opts Options) (*Set, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	s := &Set{path: path, opts: opts, log: zerolog.Nop()}
	if opts.Logger != nil {
		s.log = *opts.Logger
	}
	f, err := Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.cur.Store(&table{})
	case err != nil:
		return nil, err
	default:
		s.cur.Store(s.build(f, &table{}))
	}
	return s, nil
}

// Path returns the file's path.
func (s *Set) Path() string { return s.path }

// Named reports whether there is a clients file: then every request over
// HTTP needs a token, the owner's or a client's.
func (s *Set) Named() bool { return s.cur.Load().named }

// Lookup returns the client whose token this is: one map lookup by the
// token's public id, one SHA-256 of the token, compared with the file's
// in constant time. named reports whether there is a clients file.
func (s *Set) Lookup(token string) (c *Client, named bool) {
	t := s.cur.Load()
	id, ok := tokenID(token)
	if !ok {
		return nil, t.named
	}
	c = t.byID[id]
	if c == nil {
		return nil, t.named
	}
	sum := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(sum[:], c.sum[:]) != 1 {
		return nil, t.named
	}
	return c, t.named
}

// Client returns the client called name.
func (s *Set) Client(name string) (*Client, bool) {
	c, ok := s.cur.Load().byName[name]
	return c, ok
}

// Clients returns the clients, by name.
func (s *Set) Clients() []*Client {
	t := s.cur.Load()
	out := make([]*Client, 0, len(t.byName))
	for _, name := range slices.Sorted(maps.Keys(t.byName)) {
		out = append(out, t.byName[name])
	}
	return out
}

// Limit returns the most calls the principal may run at once: a named
// client's maxInFlight, 0 (no limit of its own) for anyone else. It fits
// protocol.Server's PrincipalLimit.
func (s *Set) Limit(p protocol.Principal) int {
	if p.Kind != protocol.PrincipalClient {
		return 0
	}
	if c := s.cur.Load().byName[p.ID]; c != nil {
		return c.MaxInFlight()
	}
	return 0
}

// Reload reads the file again and serves it. A file that is not there
// any more leaves no clients; one that cannot be served leaves the last
// good version served, and its error is logged (once while it stays the
// same) and returned.
func (s *Set) Reload() error {
	s.reload.Lock()
	defer s.reload.Unlock()
	old := s.cur.Load()
	f, err := Read(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f = nil
	case err != nil:
		if msg := err.Error(); msg != s.lastErr {
			s.lastErr = msg
			s.log.Error().Err(err).Str("clients", s.path).Msg("clients file not served; keeping its last good version")
		}
		return err
	}
	s.lastErr = ""
	next := &table{}
	if f != nil {
		next = s.build(f, old)
	}
	ch := diff(old, next)
	if !ch.Lists && len(ch.Revoked) == 0 && old.named == next.named {
		return nil
	}
	s.cur.Store(next)
	for _, c := range ch.Revoked {
		close(c.revoked)
	}
	s.log.Info().Str("clients", s.path).Int("count", len(next.byName)).Int("revoked", len(ch.Revoked)).Msg("clients file loaded")
	if s.opts.OnChange != nil {
		s.opts.OnChange(ch)
	}
	return nil
}

// build returns the table of f. A client of old that f keeps with the
// same token keeps its view (given the new policy), its rate (unless the
// rate changed) and its revocation.
func (s *Set) build(f *File, old *table) *table {
	t := &table{named: true, byID: map[string]*Client{}, byName: map[string]*Client{}}
	for name, e := range f.Clients {
		c := &Client{name: name, principal: protocol.Principal{Kind: protocol.PrincipalClient, ID: name}, entry: *e}
		sum, _ := hex.DecodeString(e.Token.SHA256) // checked: 64 hex digits
		copy(c.sum[:], sum)
		c.policy, _ = json.Marshal(e.Policy, json.Deterministic(true)) // strings, numbers, booleans: it encodes
		prev := old.byName[name]
		switch {
		case prev == nil:
			c.view = s.opts.Registry.View(e.Policy.Registry(name))
		case string(prev.policy) != string(c.policy):
			c.view = prev.view
			c.view.SetPolicy(e.Policy.Registry(name))
		default:
			c.view = prev.view
		}
		if prev != nil && prev.sum == c.sum {
			c.revoked = prev.revoked
		} else {
			c.revoked = make(chan struct{})
		}
		if n := e.Policy.CallsPerMinute; n > 0 {
			if prev != nil && prev.bucket != nil && prev.bucket.perMinute == n {
				c.bucket = prev.bucket
			} else {
				c.bucket = newBucket(n, s.opts.Now)
			}
		}
		c.session = protocol.SessionOptions{
			Principal:       c.principal,
			DenySampling:    e.Policy.Sampling != nil && !*e.Policy.Sampling,
			DenyElicitation: e.Policy.Elicitation != nil && !*e.Policy.Elicitation,
		}
		if e.Policy.ConfirmUnsupported == "page" {
			c.session.AskOwner = s.opts.Owner
			if c.session.AskOwner == nil {
				c.session.AskOwner = noConsole{} // refused, never run unasked: a policy only narrows
			}
		}
		if prev != nil && prev.view == c.view {
			c.session.Providers = prev.session.Providers
		} else {
			p := &protocol.Providers{Tools: c.view, Resources: c.view, Prompts: c.view, Completions: c.view}
			if s.opts.Search != nil {
				p.Tools = s.opts.Search.Over(c.view)
			}
			c.session.Providers = p
		}
		t.byID[e.Token.ID], t.byName[name] = c, c
	}
	return t
}

// diff says what next changed of old.
func diff(old, next *table) Change {
	var ch Change
	for _, name := range slices.Sorted(maps.Keys(old.byName)) {
		o := old.byName[name]
		n := next.byName[name]
		switch {
		case n == nil:
			ch.Revoked, ch.Lists = append(ch.Revoked, o), true
		case n.revoked != o.revoked:
			ch.Revoked = append(ch.Revoked, o)
		}
		if n != nil && string(n.policy) != string(o.policy) {
			ch.Lists = true
		}
	}
	for name := range next.byName {
		if old.byName[name] == nil {
			ch.Lists = true
		}
	}
	return ch
}
