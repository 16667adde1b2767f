package clients

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
)

const notes = `{"id":"notes","tools":[
 {"name":"notes.list","description":"List.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"notes.delete","description":"Delete.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}
],"implementation":{"methods":{"notes.list":"notes.list","notes.delete":"notes.delete"}}}`

func newRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	return registry.New(registry.Options{Dirs: []string{dir}, Prefix: "t"})
}

// fileWith writes a clients file of the given policies and returns its
// path and each client's token.
func fileWith(t testing.TB, policies map[string]Policy) (string, map[string]string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clients.json")
	f := &File{Clients: map[string]*Entry{}}
	tokens := map[string]string{}
	for name, p := range policies {
		token, err := f.Add(name, p, now)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = token
	}
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	return path, tokens
}

func edit(t *testing.T, path string, change func(f *File)) {
	t.Helper()
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	change(f)
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
}

func toolNames(c *Client) string {
	var out []string
	for _, tool := range c.Session().Providers.Tools.Tools().Tools() {
		out = append(out, tool.Name)
	}
	return strings.Join(out, ",")
}

// A token selects its client, and only its own: a wrong secret, another
// client's id, or anything else selects none.
func TestATokenSelectsItsClient(t *testing.T) {
	path, tokens := fileWith(t, map[string]Policy{"cursor": {ReadOnly: true}, "claude": {}})
	s, err := Open(path, Options{Registry: newRegistry(t)})
	if err != nil {
		t.Fatal(err)
	}
	for name, token := range tokens {
		c, named := s.Lookup(token)
		if !named || c == nil || c.Name() != name || c.Principal() != (protocol.Principal{Kind: protocol.PrincipalClient, ID: name}) {
			t.Errorf("Lookup(%s's token) = %v %v", name, c, named)
		}
	}
	cursor := tokens["cursor"]
	for _, bad := range []string{"", "secret", cursor[:len(cursor)-1] + "x", cursor[:13] + tokens["claude"][13:], strings.Replace(cursor, "tsk_", "tsq_", 1)} {
		if c, named := s.Lookup(bad); c != nil || !named {
			t.Errorf("Lookup(%q) = %v %v, want no client, named", bad, c, named)
		}
	}
	if got := toolNames(mustClient(t, s, "cursor")); got != "t_notes_list" {
		t.Errorf("cursor, read-only, sees %s", got)
	}
	if got := toolNames(mustClient(t, s, "claude")); got != "t_notes_list,t_notes_delete" {
		t.Errorf("claude sees %s", got)
	}

	none, err := Open(filepath.Join(t.TempDir(), "absent.json"), Options{Registry: newRegistry(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c, named := none.Lookup(cursor); c != nil || named || none.Named() {
		t.Errorf("without a file: Lookup = %v %v, want nothing, not named", c, named)
	}
}

func mustClient(t *testing.T, s *Set, name string) *Client {
	t.Helper()
	c, ok := s.Client(name)
	if !ok {
		t.Fatalf("no client %s", name)
	}
	return c
}

// An edit is served at the next request: a new policy in the same view,
// which the sessions of the client keep; an edit that breaks the file is
// not, and the last good version stays.
func TestAnEditIsServedAndABrokenOneIsNot(t *testing.T) {
	path, tokens := fileWith(t, map[string]Policy{"cursor": {}, "script": {CallsPerMinute: 1, MaxInFlight: 2}})
	var changes []Change
	s, err := Open(path, Options{Registry: newRegistry(t), OnChange: func(c Change) { changes = append(changes, c) }})
	if err != nil {
		t.Fatal(err)
	}
	before := mustClient(t, s, "cursor")
	script := mustClient(t, s, "script")
	if _, ok := script.Admit(1); !ok {
		t.Fatal("the script's first call refused")
	}
	edit(t, path, func(f *File) { f.Clients["cursor"].Policy.ReadOnly = true })
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	after := mustClient(t, s, "cursor")
	if toolNames(after) != "t_notes_list" || after.Session().Providers != before.Session().Providers || after.Revoked() != before.Revoked() {
		t.Errorf("after the edit cursor sees %s (its providers kept: %v, its revocation kept: %v)", toolNames(after),
			after.Session().Providers == before.Session().Providers, after.Revoked() == before.Revoked())
	}
	if toolNames(before) != "t_notes_list" {
		t.Error("a session made before the edit still serves the old policy")
	}
	if len(changes) != 1 || !changes[0].Lists || len(changes[0].Revoked) != 0 {
		t.Errorf("changes %+v, want one, of lists, revoking nobody", changes)
	}
	if _, ok := mustClient(t, s, "script").Admit(1); ok {
		t.Error("the script's rate began again after an edit of another client")
	}
	if s.Limit(mustClient(t, s, "script").Principal()) != 2 || s.Limit(protocol.Principal{Kind: protocol.PrincipalProcess}) != 0 {
		t.Error("Limit: want the script's maxInFlight, and none for the process")
	}

	for _, broken := range []func(){
		func() { os.WriteFile(path, []byte(`{"clients":{`), 0o600) },
		func() { os.Chmod(path, 0o644) },
	} {
		broken()
		if err := s.Reload(); err == nil {
			t.Error("a broken file reloaded without error")
		}
		if c, _ := s.Lookup(tokens["cursor"]); c == nil || toolNames(c) != "t_notes_list" {
			t.Error("the last good version is not served")
		}
	}
	if len(changes) != 1 {
		t.Errorf("%d changes told, want still 1", len(changes))
	}
}

// A client removed, or whose token is replaced, is revoked: its token
// selects nobody, its Revoked channel closes, and the change says so;
// the others keep theirs.
func TestRemovedAndRotatedClientsAreRevoked(t *testing.T) {
	path, tokens := fileWith(t, map[string]Policy{"a": {}, "b": {}, "c": {}})
	var changes []Change
	s, err := Open(path, Options{Registry: newRegistry(t), OnChange: func(c Change) { changes = append(changes, c) }})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := mustClient(t, s, "a"), mustClient(t, s, "b"), mustClient(t, s, "c")
	var newB string
	edit(t, path, func(f *File) {
		f.Remove("a")
		newB, _ = f.Rotate("b", now)
	})
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || len(changes[0].Revoked) != 2 || changes[0].Revoked[0] != a || changes[0].Revoked[1] != b {
		t.Fatalf("changes %+v, want a and b revoked", changes)
	}
	for _, gone := range []*Client{a, b} {
		select {
		case <-gone.Revoked():
		default:
			t.Errorf("%s: Revoked not closed", gone.Name())
		}
	}
	select {
	case <-c.Revoked():
		t.Error("c was revoked")
	default:
	}
	for token, want := range map[string]string{tokens["a"]: "", tokens["b"]: "", newB: "b", tokens["c"]: "c"} {
		got, _ := s.Lookup(token)
		if got == nil && want != "" || got != nil && got.Name() != want {
			t.Errorf("Lookup: %v, want %q", got, want)
		}
	}

	os.Remove(path)
	if err := s.Reload(); err != nil || s.Named() {
		t.Errorf("after the file is removed: %v, named %v; want none", err, s.Named())
	}
	if len(changes) != 2 || len(changes[1].Revoked) != 2 {
		t.Errorf("removing the file: changes %+v, want every client revoked", changes)
	}
}

// Watch serves an edit of the file, and the file appearing, as soon as
// it is written (within a second).
func TestWatchFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "clients.json")
	changed := make(chan Change, 10)
	s, err := Open(path, Options{Registry: newRegistry(t), OnChange: func(c Change) { changed <- c }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- s.Watch(t.Context()) }() // ends with the test's context
	t.Cleanup(func() { <-done })
	wait := func(what string) {
		t.Helper()
		start := time.Now()
		select {
		case <-changed:
			t.Logf("%s served after %v", what, time.Since(start))
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not served", what)
		}
	}
	f := &File{Clients: map[string]*Entry{}}
	token, _ := f.Add("cursor", Policy{}, now)
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	wait("the file appearing")
	if c, named := s.Lookup(token); c == nil || !named {
		t.Fatal("the new file's client is not served")
	}
	edit(t, path, func(f *File) { f.Clients["cursor"].Policy.ReadOnly = true })
	wait("an edit")
	if got := toolNames(mustClient(t, s, "cursor")); got != "t_notes_list" {
		t.Errorf("after the edit cursor sees %s", got)
	}
}

// The cost of selecting a request's client by its token: a map lookup
// and a SHA-256 of the token, whatever the number of clients.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("%d clients", n), func(b *testing.B) {
			policies := map[string]Policy{}
			for i := range n {
				policies[fmt.Sprintf("c%d", i)] = Policy{}
			}
			path, tokens := fileWith(b, policies)
			s, err := Open(path, Options{Registry: newRegistry(b)})
			if err != nil {
				b.Fatal(err)
			}
			token := tokens["c0"]
			b.ReportAllocs()
			for b.Loop() {
				if c, _ := s.Lookup(token); c == nil {
					b.Fatal("no client")
				}
			}
		})
	}
}

// askingOwner is an owner that answers yes to everything.
type askingOwner struct{}

func (askingOwner) Ask(context.Context, *protocol.Call, protocol.OwnerQuestion) (jsontext.Value, error) {
	return jsontext.Value(`{"action":"accept","content":{"confirm":true}}`), nil
}

// A client whose policy says confirmUnsupported page has the set's Owner
// asked what it cannot ask; without one, the owner is away (its questions
// refused, never run unasked). Other clients ask no owner of their own.
func TestAPagePolicyAsksTheOwner(t *testing.T) {
	path, _ := fileWith(t, map[string]Policy{"pager": {ConfirmUnsupported: "page"}, "other": {}})
	s, err := Open(path, Options{Registry: newRegistry(t), Owner: askingOwner{}})
	if err != nil {
		t.Fatal(err)
	}
	if o := mustClient(t, s, "pager").Session().AskOwner; o != (askingOwner{}) {
		t.Errorf("the page client's owner: %#v", o)
	}
	if o := mustClient(t, s, "other").Session().AskOwner; o != nil {
		t.Errorf("another client's owner: %#v", o)
	}
	if got := mustClient(t, s, "pager").Policy(); got.Summary() != "confirm-unsupported page" {
		t.Errorf("Summary %q", got.Summary())
	}

	none, err := Open(path, Options{Registry: newRegistry(t)})
	if err != nil {
		t.Fatal(err)
	}
	o := mustClient(t, none, "pager").Session().AskOwner
	if o == nil {
		t.Fatal("a page client of a set with no owner asks no one: its calls would run unasked")
	}
	if _, err := o.Ask(t.Context(), nil, protocol.OwnerQuestion{Confirm: true, Message: "Delete?"}); !errors.Is(err, protocol.ErrOwnerAway) || !strings.Contains(err.Error(), "serves no console") {
		t.Errorf("asked with no console: %v", err)
	}
}
