package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// fakeBackend records calls and answers with fn.
type fakeBackend struct {
	mu    sync.Mutex
	calls []string // method + " " + params
	fn    func(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error)
}

func (f *fakeBackend) Call(ctx context.Context, method string, params jsontext.Value, _ socketclient.Call) (jsontext.Value, error) {
	f.mu.Lock()
	f.calls = append(f.calls, method+" "+string(params))
	f.mu.Unlock()
	res, err := f.fn(ctx, method, jsontext.Value(params))
	return jsontext.Value(res), err
}

// aCall is the Call of a request made in a test: in protocol 2025-11-25,
// by a client that cannot be asked, whose bytes are not counted.
func aCall() *protocol.Call { return protocol.NewCall(protocol.CallOptions{}) }

func (f *fakeBackend) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// manifestJSON builds a manifest whose tools map to methods of the same name.
func manifestJSON(id string, tools ...string) string {
	var ts, ms []string
	for _, t := range tools {
		ts = append(ts, fmt.Sprintf(`{"name":%q,"description":"Does %s.","inputSchema":{"type":"object"}}`, t, t))
		ms = append(ms, fmt.Sprintf(`%q:%q`, t, t))
	}
	return fmt.Sprintf(`{"id":%q,"tools":[%s],"implementation":{"methods":{%s}}}`, id, strings.Join(ts, ","), strings.Join(ms, ","))
}

func names(s *Snapshot) string {
	var out []string
	for _, e := range s.Entries {
		out = append(out, e.Name)
	}
	return strings.Join(out, ",")
}

func problemStrings(ps []manifest.Problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, "\n")
}

func TestSnapshotNamesAndOrder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.json"), manifestJSON("b", "contacts.list", "contacts_list"))
	writeFile(t, filepath.Join(dir, "a", "x.json"), manifestJSON("a", "zeta", "alpha"))
	writeFile(t, filepath.Join(dir, "c.json"), manifestJSON("c", "contacts-list", "contacts.list"))
	r := New(Options{Dirs: []string{dir}, Prefix: "tairseach"})
	s := r.Snapshot()
	// Files in path order, tools in file order; the first to claim a name keeps it.
	if got, want := names(s), "tairseach_zeta,tairseach_alpha,tairseach_contacts_list,tairseach_contacts-list"; got != want {
		t.Errorf("names = %s, want %s", got, want)
	}
	e, ok := s.Lookup("tairseach_contacts_list")
	if !ok || e.Method != "contacts.list" || e.Tool.Name != "contacts.list" {
		t.Errorf("lookup = %+v", e)
	}
	// contacts_list maps to another method: an error. c.json's
	// contacts.list maps to the same method as b.json's: the same tool,
	// served once. Renames are not problems.
	want := `b.json:tools[1].name: error: client name "tairseach_contacts_list" is already used by ` + filepath.Join(dir, "b.json") + `:tools[0] (tool "contacts.list"); not served`
	if ps := problemStrings(s.Problems); !strings.HasSuffix(ps, want) || strings.Count(ps, "\n") != 0 {
		t.Errorf("problems = %s\nwant only %s", ps, want)
	}
	var folded []string
	for _, u := range s.Unserved {
		if u.Folded {
			folded = append(folded, filepath.Base(u.File)+" "+u.Tool)
		}
	}
	if got := strings.Join(folded, ","); got != "c.json contacts.list" {
		t.Errorf("folded = %s, want c.json contacts.list", got)
	}
	if r.Tools().Len() != 4 {
		t.Errorf("tool set has %d tools", r.Tools().Len())
	}
}

// A missing folder serves no tools, and is reported once, like any
// other problem, until it appears.
func TestMissingFolderMeansNoTools(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	var reported []string
	r := New(Options{Dirs: []string{dir}, Report: func(_ zerolog.Level, msg string) { reported = append(reported, msg) }})
	if n := len(r.Snapshot().Entries); n != 0 {
		t.Errorf("%d tools from a missing folder", n)
	}
	r.Reload()
	if len(reported) != 1 || !strings.Contains(reported[0], "does not exist") {
		t.Errorf("reported %q, want the missing folder once", reported)
	}
}

const schemaManifest = `{"id":"n","tools":[
 {"name":"notes.create","description":"Create.","inputSchema":{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["title"],"additionalProperties":false},
  "outputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}},
 {"name":"notes.any","description":"Any.","inputSchema":{"type":"object"}},
 {"name":"notes.count","description":"Count.","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0}}},
  "outputSchema":{"type":"object","properties":{"count":{"type":"integer"}}}}
],"implementation":{"methods":{"notes.create":"notes.create","notes.any":"notes.any","notes.count":"notes.count"}}}`

func newCallRegistry(t *testing.T, fn func(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error)) (*Registry, *fakeBackend) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "n.json"), schemaManifest)
	be := &fakeBackend{fn: fn}
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be, BackendAddr: "/run/t.sock", CallTimeout: time.Second, Hints: testHints})
	return r, be
}

// testHints are hints as a command line gives them.
var testHints = Hints{
	Limits: map[string]string{"depth": "set with --max-depth", "number length": "set with --max-number-length", "size": "set with --max-checked-size",
		"values": "set with --max-checked-values"},
	Backend: "fix --socket",
}

func call(t *testing.T, r *Registry, name, args string) *protocol.CallToolResult {
	t.Helper()
	res, err := r.CallTool(t.Context(), aCall(), &protocol.CallToolRequest{Name: name, Arguments: jsontext.Value(args)})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func resultText(r *protocol.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.String())
	}
	return b.String()
}

func TestCallOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		tool      string
		args      string
		reply     string
		err       error
		wantError bool
		wantText  []string
		wantSC    string
		noBackend bool // the backend must not be called
	}{
		{name: "a result object becomes text and structured content", tool: "t_notes_create", args: `{"title":"a"}`, reply: `{"id":"n1","extra":true}`,
			wantText: []string{`{"id":"n1","extra":true}`}, wantSC: `{"id":"n1","extra":true}`},
		{name: "a non-object result is text only", tool: "t_notes_any", args: `{}`, reply: `[1,2]`, wantText: []string{`[1,2]`}},
		{name: "missing arguments are treated as {}", tool: "t_notes_any", args: ``, reply: `null`, wantText: []string{`null`}},
		{name: "arguments that fail the schema name each path and are not sent", tool: "t_notes_create", args: `{"tags":[1,"x",2],"bogus":1}`, noBackend: true, wantError: true,
			wantText: []string{"Invalid arguments for t_notes_create", "nothing was sent to the backend", "- arguments: missing properties: 'title'", "- arguments: additionalProperties 'bogus' not allowed", "- arguments.tags[0]: expected string, but got number", "- arguments.tags[2]: expected string"}},
		{name: "a number the schema library cannot read is refused, not a crash", tool: "t_notes_count", args: `{"n":1e-1000001}`, noBackend: true, wantError: true,
			wantText: []string{"Invalid arguments for t_notes_count", "out of range"}},
		{name: "a result the schema library cannot read breaks the contract", tool: "t_notes_count", args: `{"n":1}`, reply: `{"count":1e1000001}`, wantError: true,
			wantText: []string{"The backend broke its contract", "out of range"}},
		{name: "a result that breaks the outputSchema is an error", tool: "t_notes_create", args: `{"title":"a"}`, reply: `{"id":7}`, wantError: true,
			wantText: []string{"The backend broke its contract", "result.id: expected string, but got number"}},
		{name: "a backend error keeps its code, message and data", tool: "t_notes_any", args: `{}`, err: &socketclient.RPCError{Code: -32011, Message: "Permission denied", Data: jsontext.Value(`{"reason":"no"}`)}, wantError: true,
			wantText: []string{"The backend returned error -32011 for notes.any: Permission denied", `Details: {"reason":"no"}`}},
		{name: "an unreachable backend says where it was looked for", tool: "t_notes_any", args: `{}`, err: fmt.Errorf("%w at /run/t.sock: connect: no such file or directory", socketclient.ErrUnavailable), wantError: true,
			wantText: []string{"not reachable", "at /run/t.sock: connect: no such file or directory", "Start it (or fix --socket)"}},
		{name: "a backend too busy to accept a connection is busy, not down", tool: "t_notes_any", args: `{}`, err: fmt.Errorf("%w at /run/t.sock: it accepted no connection within 2s", socketclient.ErrBusy), wantError: true,
			wantText: []string{"running but busy", "at /run/t.sock: it accepted no connection within 2s", "Nothing was sent to it; call the tool again in a moment."}},
		{name: "a timeout says the backend is slow or hung", tool: "t_notes_any", args: `{}`, err: fmt.Errorf("read: %w", context.DeadlineExceeded), wantError: true,
			wantText: []string{"did not answer notes.any within 1s"}},
		{name: "garbage from the backend is an error", tool: "t_notes_any", args: `{}`, err: fmt.Errorf("%w: invalid character 'h'", socketclient.ErrBadReply), wantError: true,
			wantText: []string{"invalid reply to notes.any"}},
		{name: "any other failure is an error", tool: "t_notes_any", args: `{}`, err: errors.New("boom"), wantError: true, wantText: []string{"boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, be := newCallRegistry(t, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
				if tt.err != nil {
					return nil, tt.err
				}
				return jsontext.Value(tt.reply), nil
			})
			res := call(t, r, tt.tool, tt.args)
			if res.IsError != tt.wantError {
				t.Errorf("IsError = %v, want %v (%s)", res.IsError, tt.wantError, resultText(res))
			}
			for _, w := range tt.wantText {
				if !strings.Contains(resultText(res), w) {
					t.Errorf("text %q lacks %q", resultText(res), w)
				}
			}
			if string(res.StructuredContent) != tt.wantSC {
				t.Errorf("structuredContent = %s, want %s", res.StructuredContent, tt.wantSC)
			}
			if n := len(be.recorded()); tt.noBackend && n != 0 || !tt.noBackend && n != 1 {
				t.Errorf("backend called %d times", n)
			}
		})
	}
}

func TestArgumentsReachTheBackendUnchanged(t *testing.T) {
	r, be := newCallRegistry(t, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return jsontext.Value(`{"id":"x"}`), nil
	})
	args := `{"title": "caf\u00e9",  "tags":["a"]}`
	call(t, r, "t_notes_create", args)
	if got := be.recorded(); len(got) != 1 || got[0] != "notes.create "+args {
		t.Errorf("backend got %q", got)
	}
}

func TestUnknownToolIsInvalidParams(t *testing.T) {
	r, be := newCallRegistry(t, nil)
	_, err := r.CallTool(t.Context(), aCall(), &protocol.CallToolRequest{Name: "t_nope"})
	if !errors.Is(err, protocol.ErrInvalidParams) {
		t.Errorf("err = %v, want ErrInvalidParams", err)
	}
	if len(be.recorded()) != 0 {
		t.Error("an unknown tool reached the backend")
	}
}

func TestCallsFinishAgainstTheSnapshotTheyStartedWith(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "n.json")
	writeFile(t, path, schemaManifest)
	started, release := make(chan struct{}), make(chan struct{})
	be := &fakeBackend{fn: func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		close(started)
		<-release
		return jsontext.Value(`{"id":7}`), nil // breaks the old outputSchema
	}}
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be})
	done := make(chan *protocol.CallToolResult)
	go func() {
		res, _ := r.CallTool(context.Background(), aCall(), &protocol.CallToolRequest{Name: "t_notes_create", Arguments: jsontext.Value(`{"title":"a"}`)})
		done <- res
	}()
	<-started
	os.Remove(path)
	r.Reload()
	if len(r.Snapshot().Entries) != 0 {
		t.Fatal("tools of a removed file still served")
	}
	close(release)
	if res := <-done; !res.IsError || !strings.Contains(resultText(res), "broke its contract") {
		t.Errorf("the call did not finish against its own snapshot: %s", resultText(res))
	}
}

func TestReloadKeepsLastGoodAndReportsOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	writeFile(t, path, manifestJSON("m", "a.one", "a.two"))
	var reported []string
	var changes int
	r := New(Options{Dirs: []string{dir}, Prefix: "p",
		Report:   func(_ zerolog.Level, msg string) { reported = append(reported, msg) },
		OnChange: func(*Snapshot, Changes) { changes++ },
	})
	changes = 0
	steps := []struct {
		name, data string // data "" removes the file
		wantNames  string
		wantChange bool
		wantReport string // substring of a new report, "" for none
	}{
		{"a no-op save changes nothing", manifestJSON("m", "a.one", "a.two"), "p_a_one,p_a_two", false, ""},
		{"a broken file keeps its last good tools", `{"id":"m","tools":[`, "p_a_one,p_a_two", false, "invalid JSON"},
		{"the same broken content is not reported again", `{"id":"m","tools":[`, "p_a_one,p_a_two", false, ""},
		{"a fixed file serves its new tools", manifestJSON("m", "a.one", "a.three"), "p_a_one,p_a_three", true, ""},
		{"a tool-level error also keeps the last good version", `{"id":"m","tools":[{"name":"a.one","description":"x","inputSchema":{"type":"string"}}],"implementation":{"methods":{"a.one":"a.one"}}}`, "p_a_one,p_a_three", false, "inputSchema.type"},
		{"a removed file's tools go away", "", "", true, ""},
		{"a new file's tools appear", manifestJSON("m", "b.x"), "p_b_x", true, ""},
	}
	for _, st := range steps {
		reported = nil
		changes = 0
		if st.data == "" {
			os.Remove(path)
		} else {
			writeFile(t, path, st.data)
		}
		s := r.Reload()
		if got := names(s); got != st.wantNames {
			t.Errorf("%s: names = %s, want %s", st.name, got, st.wantNames)
		}
		if (changes > 0) != st.wantChange {
			t.Errorf("%s: OnChange called %d times, want change %v", st.name, changes, st.wantChange)
		}
		all := strings.Join(reported, "\n")
		if st.wantReport == "" && strings.Contains(all, "error") {
			t.Errorf("%s: unexpected reports:\n%s", st.name, all)
		}
		if st.wantReport != "" && !strings.Contains(all, st.wantReport) {
			t.Errorf("%s: reports lack %q:\n%s", st.name, st.wantReport, all)
		}
	}
}

// watchRegistry starts Watch and returns a channel of tool name lists,
// one per published change.
func watchRegistry(t *testing.T, dirs ...string) (*Registry, <-chan string) {
	t.Helper()
	changes := make(chan string, 100)
	r := New(Options{Dirs: dirs, Debounce: 20 * time.Millisecond, OnChange: func(s *Snapshot, _ Changes) { changes <- names(s) }})
	// Drain the change New itself published.
	for len(changes) > 0 {
		<-changes
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Watch(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	watching(t, dirs[0], changes)
	return r, changes
}

// watching returns once the watcher sees changes in dir, which it proves
// by adding a manifest there and removing it again. Nothing is done for
// a dir that does not exist.
func watching(t *testing.T, dir string, changes <-chan string) {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		return
	}
	ready := filepath.Join(dir, "zz-watching.json")
	writeFile(t, ready, manifestJSON("zz", "zz.watching"))
	waitChange(t, changes, func(names string) bool { return strings.Contains(names, "zz_watching") })
	if err := os.Remove(ready); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changes, func(names string) bool { return !strings.Contains(names, "zz_watching") })
}

func waitChange(t *testing.T, changes <-chan string, ok func(names string) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-changes:
			if ok(got) {
				return
			}
		case <-timeout:
			t.Fatal("the watcher saw no change within 10s")
		}
	}
}

// expectNames waits for a change whose tool list is want.
// It returns how many changes it saw, the last included.
func expectNames(t *testing.T, changes <-chan string, want string) int {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for n := 1; ; n++ {
		select {
		case got := <-changes:
			if got == want {
				return n
			}
		case <-timeout:
			t.Fatalf("no change to %q within 10s", want)
		}
	}
}

func TestWatch(t *testing.T) {
	t.Run("create then write", func(t *testing.T) {
		dir := t.TempDir()
		_, changes := watchRegistry(t, dir)
		f, err := os.Create(filepath.Join(dir, "m.json"))
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(manifestJSON("m", "one"))
		f.Close()
		expectNames(t, changes, "one")
	})
	t.Run("an editor's rename over the original", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "m.json"), manifestJSON("m", "one"))
		_, changes := watchRegistry(t, dir)
		tmp := filepath.Join(dir, ".m.json.swp")
		writeFile(t, tmp, manifestJSON("m", "two"))
		if err := os.Rename(tmp, filepath.Join(dir, "m.json")); err != nil {
			t.Fatal(err)
		}
		expectNames(t, changes, "two")
	})
	t.Run("a folder created later, with files", func(t *testing.T) {
		dir := t.TempDir()
		_, changes := watchRegistry(t, dir)
		writeFile(t, filepath.Join(dir, "sub", "deeper", "m.json"), manifestJSON("m", "deep"))
		expectNames(t, changes, "deep")
		writeFile(t, filepath.Join(dir, "sub", "deeper", "n.json"), manifestJSON("n", "deeper"))
		expectNames(t, changes, "deep,deeper")
	})
	t.Run("a folder deleted and recreated", func(t *testing.T) {
		dir := t.TempDir()
		sub := filepath.Join(dir, "sub")
		writeFile(t, filepath.Join(sub, "m.json"), manifestJSON("m", "one"))
		_, changes := watchRegistry(t, dir)
		os.RemoveAll(sub)
		expectNames(t, changes, "")
		writeFile(t, filepath.Join(sub, "m.json"), manifestJSON("m", "again"))
		expectNames(t, changes, "again")
	})
	t.Run("the root missing at start and appearing later", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "a", "manifests")
		_, changes := watchRegistry(t, root)
		writeFile(t, filepath.Join(root, "m.json"), manifestJSON("m", "late"))
		expectNames(t, changes, "late")
		os.RemoveAll(root)
		expectNames(t, changes, "")
		writeFile(t, filepath.Join(root, "m.json"), manifestJSON("m", "back"))
		expectNames(t, changes, "back")
	})
	t.Run("a burst of writes is one reload", func(t *testing.T) {
		dir := t.TempDir()
		_, changes := watchRegistry(t, dir)
		for i := range 50 {
			writeFile(t, filepath.Join(dir, fmt.Sprintf("m%02d.json", i)), manifestJSON(fmt.Sprintf("m%02d", i), fmt.Sprintf("t%02d", i)))
		}
		var want []string
		for i := range 50 {
			want = append(want, fmt.Sprintf("t%02d", i))
		}
		if n := expectNames(t, changes, strings.Join(want, ",")); n > 5 {
			t.Errorf("%d changed lists for one burst of 50 writes", n)
		}
	})
}

// TestReloadWithNothingChangedKeepsTheSnapshot: a reload that finds the
// same files with the same contents (the watcher's first reload, a
// no-op save) keeps the snapshot as it is instead of rebuilding it.
func TestReloadWithNothingChangedKeepsTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	writeFile(t, a, manifestJSON("a", "a.one"))
	writeFile(t, b, manifestJSON("b", "b.one"))
	r := New(Options{Dirs: []string{dir}})
	first := r.Snapshot()
	if got := r.Reload(); got != first {
		t.Fatalf("a reload with nothing changed built a new snapshot")
	}
	writeFile(t, b, manifestJSON("b", "b.one")) // saved, same bytes
	if got := r.Reload(); got != first {
		t.Fatalf("a no-op save built a new snapshot")
	}
	for _, change := range []struct {
		name string
		do   func()
		want string
	}{
		{"new contents", func() { writeFile(t, b, manifestJSON("b", "b.two")) }, "a_one,b_two"},
		{"a removed file", func() { os.Remove(b) }, "a_one"},
		{"a new file", func() { writeFile(t, b, manifestJSON("b", "b.one")) }, "a_one,b_one"},
	} {
		before := r.Snapshot()
		change.do()
		s := r.Reload()
		if s == before || names(s) != change.want {
			t.Errorf("%s: new snapshot %v, names %s; want a new one with %s", change.name, s != before, names(s), change.want)
		}
	}
}

// The backend is given the call timeout as its context's deadline, and
// its timeout is reported as one.
func TestTheBackendGetsTheCallTimeout(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "n.json"), schemaManifest)
	var left time.Duration
	be := &fakeBackend{fn: func(ctx context.Context, _ string, _ jsontext.Value) (jsontext.Value, error) {
		if deadline, ok := ctx.Deadline(); ok {
			left = time.Until(deadline)
		}
		return nil, fmt.Errorf("waiting for the backend: %w", context.DeadlineExceeded)
	}}
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be, BackendAddr: "/run/t.sock", CallTimeout: 3 * time.Second})
	res := call(t, r, "t_notes_any", `{}`)
	if left <= 2*time.Second || left > 3*time.Second {
		t.Errorf("the backend's context had %v left, want the 3s call timeout", left)
	}
	if !res.IsError || !strings.Contains(res.Content[0].String(), "did not answer notes.any within 3s") {
		t.Errorf("result = %+v, want the timeout message", res)
	}
}

// Without hints the messages to a model name no setting of a command
// line; with them, each message carries its own.
func TestHintsCompleteMessagesToTheModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "h.json"), hostileManifest)
	down := &fakeBackend{fn: func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return nil, fmt.Errorf("%w at /run/t.sock: connect: no such file or directory", socketclient.ErrUnavailable)
	}}
	deep := nested("c", 100, "1")
	for _, tt := range []struct {
		name           string
		hints          Hints
		limit, backend string
	}{
		{"none", Hints{}, "the value is nested deeper than the 64 levels that are checked. Nothing", "Start it, then call the tool again."},
		{"given", Hints{Limits: map[string]string{"depth": "ask for more"}, Backend: "look elsewhere"},
			"(the bridge's limit, ask for more).", "Start it (or look elsewhere), then call the tool again."},
	} {
		r := New(Options{Dirs: []string{dir}, Backend: down, Hints: tt.hints})
		if text := resultText(call(t, r, "h_tree", deep)); !strings.Contains(text, tt.limit) {
			t.Errorf("hints %s: %q lacks %q", tt.name, text, tt.limit)
		}
		if text := resultText(call(t, r, "h_bounded", `{}`)); !strings.Contains(text, tt.backend) {
			t.Errorf("hints %s: %q lacks %q", tt.name, text, tt.backend)
		}
	}
}
