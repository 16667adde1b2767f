package console

// What the pages say: each bullet of the console's issue (overview,
// tools, clients, calls, charts), checked against the fixtures it is
// drawn from.

import (
	"context"
	"errors"
	"html/template"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/registry/clients"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// contentManifest serves notes.delete, notes.list and notes.import; it
// hides notes.hidden, declares notes.orphan without a method (a
// warning) and notes.delete twice (an error).
const contentManifest = `{"id":"notes","tools":[
 {"name":"notes.delete","description":"Delete a note.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}},"annotations":{"destructiveHint":true}},
 {"name":"notes.list","description":"List the notes.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"notes.hidden","description":"Hidden.","inputSchema":{"type":"object"},"mcpExpose":false},
 {"name":"notes.import","description":"Imports notes.","inputSchema":{"type":"object"}},
 {"name":"notes.orphan","description":"Has no method.","inputSchema":{"type":"object"}},
 {"name":"notes.delete","description":"Delete again.","inputSchema":{"type":"object"}}
],"implementation":{"methods":{"notes.delete":"notes.delete","notes.list":"notes.list","notes.hidden":"notes.hidden","notes.import":"notes.import"}}}`

// contentBackend answers notes.list with an error, notes.import once
// gate is closed (or its call ends), anything else at once.
type contentBackend struct{ gate chan struct{} }

func (b contentBackend) Call(ctx context.Context, method string, _ jsontext.Value, _ socketclient.Call) (jsontext.Value, error) {
	switch method {
	case "notes.list":
		return nil, &socketclient.RPCError{Code: -32011, Message: "Permission denied"}
	case "notes.import":
		select {
		case <-b.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return jsontext.Value(`{"ok":true}`), nil
}

// newContentFixture is newFixtureWith's console over contentManifest and
// a contentBackend whose calls wait for gate, when not nil.
func newContentFixture(t *testing.T, o Options, gate chan struct{}, setup func(o *Options, reg *registry.Registry)) *fixture {
	t.Helper()
	return newFixtureWith(t, o, contentManifest, contentBackend{gate: gate}, setup)
}

// withClients opens a clients file of policies over the registry, as the
// console's Clients.
func withClients(t *testing.T, policies map[string]clients.Policy) func(o *Options, reg *registry.Registry) {
	return func(o *Options, reg *registry.Registry) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "clients.json")
		f := &clients.File{Clients: map[string]*clients.Entry{}}
		for _, name := range slices.Sorted(maps.Keys(policies)) {
			if _, err := f.Add(name, policies[name], time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Save(path); err != nil {
			t.Fatal(err)
		}
		set, err := clients.Open(path, clients.Options{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		o.Clients = set
	}
}

// callTool calls name on tools for client (a named client when principal
// is client:NAME), and fails the test when the call cannot be made.
func callTool(t *testing.T, tools protocol.ToolProvider, principal protocol.Principal, client, name, args string) {
	t.Helper()
	call := protocol.NewCall(protocol.CallOptions{Principal: principal, Client: protocol.ClientInfo{Name: client}, Transport: "stdio"})
	req := &protocol.CallToolRequest{Name: name}
	if args != "" {
		req.Arguments = jsontext.Value(args)
	}
	if _, err := tools.CallTool(t.Context(), call, req); err != nil {
		t.Fatal(err)
	}
}

func escaped(s string) string { return template.HTMLEscapeString(s) }

var statRE = regexp.MustCompile(`<p class="big" data-stat="([a-z]+)">([^<]*)</p>`)

// stats returns the big numbers of the overview's cards, by name.
func stats(body string) map[string]string {
	out := map[string]string{}
	for _, m := range statRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// liveRowRE matches a row of the calls in flight: tool, client, state.
var liveRowRE = regexp.MustCompile(`<tr data-seq="\d+"><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td><td class="state">([^<]*)</td>`)

func liveRows(body string) []string { return rowsOf(liveRowRE, body) }

// rowsOf returns the rows of body that re matches, each its groups
// joined by " | ".
func rowsOf(re *regexp.Regexp, body string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, strings.Join(m[1:], " | "))
	}
	return out
}

// The overview says whether the backend answers, and why not; the
// manifests' problems, file and message; the sessions open, the calls in
// flight, the bytes they hold, the calls per second and the errors.
func TestContentOverview(t *testing.T) {
	const why = "dial unix /run/tairseach/backend.sock: connect: connection refused"
	gate := make(chan struct{})
	f := newContentFixture(t, Options{Backend: func(context.Context) error { return errors.New(why) }}, gate, nil)
	b := f.browser(t)
	b.login()

	_, body := b.do("GET", "/ui/", nil)
	if !regexp.MustCompile(`<div class="card bad" id="backend">\s*<h2>Backend</h2>\s*<p class="big">not reachable</p><p class="why">` +
		regexp.QuoteMeta(escaped(why)) + `</p>`).MatchString(body) {
		t.Errorf("the overview does not say the backend is not reachable, and why:\n%s", body)
	}
	// The problems: the file and each message, and how many of each kind.
	var problems []string
	if i := strings.Index(body, `<ul class="problems">`); i >= 0 {
		for _, m := range regexp.MustCompile(`<li>([^<]*)</li>`).FindAllStringSubmatch(body[i:], -1) {
			problems = append(problems, m[1])
		}
	}
	file := f.reg.Snapshot().Entries[0].File
	for _, want := range []string{
		file + ":tools[4]: warning: no method mapping in implementation.methods; not served",
		file + `:tools[5].name: error: duplicate tool name "notes.delete" (first declared at tools[0]); not served`,
	} {
		if !slices.Contains(problems, escaped(want)) {
			t.Errorf("the overview lists no problem %q; it lists:\n%s", want, strings.Join(problems, "\n"))
		}
	}
	if !strings.Contains(body, "<b>1 errors, 1 warnings</b>") || !strings.Contains(body, "<p>3 tools listed to clients.") {
		t.Errorf("the overview does not count 1 error, 1 warning and 3 tools:\n%s", body)
	}
	if s := stats(body); s["sessions"] != "0" || s["rate"] != "0.00" || s["errors"] != "0" || s["inflight"] != "0" || s["held"] != "0 B" {
		t.Errorf("before any session or call: %v", s)
	}

	// A session of Cursor, with a call in flight holding bytes.
	s := newTaskSession(t, f, protocol.SessionOptions{Transport: "stdio"}, "Cursor")
	out := make(sink, 1)
	if err := s.ss.Handle(t.Context(), []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tairseach_notes_import","arguments":{}}}`), out); err != nil {
		t.Fatal(err)
	}
	var st protocol.Stats
	for range 500 {
		if st = f.ps.Stats(); st.InFlight == 1 && st.HeldBytes > 0 && len(f.c.live.running()) == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st.InFlight != 1 || st.HeldBytes <= 0 {
		t.Fatalf("no call in flight holding bytes: %+v", st)
	}
	_, body = b.do("GET", "/ui/", nil)
	held := formatBytes(st.HeldBytes)
	if s := stats(body); s["sessions"] != "1" || s["inflight"] != "1" || s["held"] != held || held == "0 B" {
		t.Errorf("a session, a call in flight holding %s: %v", held, s)
	}
	if !strings.Contains(body, `<p class="muted">of `+formatBytes(protocol.DefaultMaxHeldBytes)+`</p>`) {
		t.Errorf("the overview does not say the bound of the bytes held, %s:\n%s", formatBytes(protocol.DefaultMaxHeldBytes), body)
	}
	if got := liveRows(body); strings.Join(got, "\n") != "tairseach_notes_import | Cursor | running" {
		t.Errorf("the calls live: %q", got)
	}

	// 6 calls end within the minute, 2 of them errors.
	for range 2 {
		callTool(t, f.reg, protocol.Principal{}, "Cursor", "tairseach_notes_list", "")
	}
	for range 3 {
		callTool(t, f.reg, protocol.Principal{}, "Cursor", "tairseach_notes_delete", `{"id":"n-1"}`)
	}
	close(gate)
	if res := <-out; !strings.Contains(res, `\"ok\":true`) {
		t.Fatalf("the import: %s", res)
	}
	_, body = b.do("GET", "/ui/", nil)
	if s := stats(body); s["rate"] != "0.10" || s["errors"] != "2" || s["inflight"] != "0" || s["sessions"] != "1" {
		t.Errorf("6 calls ended in the last minute, 2 of them errors: %v", s)
	}
	if !strings.Contains(body, "of 6 calls in the last hour") || len(liveRows(body)) != 0 {
		t.Errorf("the overview does not count 6 calls in the last hour, none live:\n%s", body)
	}
}

// The backend card says reachable when the check passes, and nothing
// checked without a check.
func TestContentOverviewBackendReachable(t *testing.T) {
	var checked atomic.Int32
	f := newContentFixture(t, Options{Backend: func(context.Context) error { checked.Add(1); return nil }}, nil, nil)
	b := f.browser(t)
	b.login()
	_, body := b.do("GET", "/ui/", nil)
	if !regexp.MustCompile(`<div class="card ok" id="backend">\s*<h2>Backend</h2>\s*<p class="big">reachable</p>`).MatchString(body) ||
		strings.Contains(body, "not reachable") || checked.Load() != 1 {
		t.Errorf("a backend that answers (checked %d times):\n%s", checked.Load(), body)
	}
	f = newContentFixture(t, Options{}, nil, nil)
	b = f.browser(t)
	b.login()
	_, body = b.do("GET", "/ui/", nil)
	if !regexp.MustCompile(`<div class="card" id="backend">\s*<h2>Backend</h2>\s*<p>not checked</p>`).MatchString(body) || strings.Contains(body, "reachable") {
		t.Errorf("no backend check:\n%s", body)
	}
}

var (
	servedRE   = regexp.MustCompile(`<tr><td><code>([^<]+)</code></td><td>([^<]*)</td><td>([^<]*)</td><td>[^<]*</td><td>`)
	unservedRE = regexp.MustCompile(`<tr><td><code>([^<]+)</code></td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>`)
	costRE     = regexp.MustCompile(`<p class="cost">The list costs a client about <b>(\d+)</b> tokens \((\d+) bytes of <code>tools/list</code>, (\d+) tools listed\)\.</p>`)
)

// toolsOn returns the tools a tools page serves (name, manifest tool,
// method), those it does not (name, tool, file, why), and what it says
// the list costs (tokens, bytes, tools).
func toolsOn(t *testing.T, body string) (served, unserved []string, cost string) {
	t.Helper()
	i := strings.Index(body, "<h2>Not served")
	if i < 0 || !strings.Contains(body[:i], "<h2>Served") {
		t.Fatalf("no served and unserved tables:\n%s", body)
	}
	served = rowsOf(servedRE, body[:i])
	for _, m := range unservedRE.FindAllStringSubmatch(body[i:], -1) {
		m[3] = filepath.Base(m[3])
		unserved = append(unserved, strings.Join(m[1:], " | "))
	}
	if m := costRE.FindStringSubmatch(body); m != nil {
		cost = strings.Join(m[1:], " ")
	}
	return served, unserved, cost
}

// The tools page lists what is served and what is not, and why, as the
// bridge serves them and as each named client sees them, and what each
// list costs in tokens.
func TestContentTools(t *testing.T) {
	var measured []int
	listCost := func(_ context.Context, tools protocol.ToolProvider) (int, int, error) {
		n := tools.Tools().Len()
		measured = append(measured, n)
		return 1000 + 17*n, 400 * n, nil
	}
	f := newContentFixture(t, Options{ListCost: listCost}, nil, withClients(t, map[string]clients.Policy{"cursor": {ReadOnly: true}, "claude": {}}))
	b := f.browser(t)
	b.login()

	const (
		hidden  = "tairseach_notes_hidden | notes.hidden | notes.json | hidden by mcpExpose: false"
		orphan  = "tairseach_notes_orphan | notes.orphan | notes.json | no method mapping in implementation.methods"
		twice   = "tairseach_notes_delete | notes.delete | notes.json | has errors (see &#39;tairseach-mcp validate&#39;)"
		notRO   = "filtered out as not read-only: its annotations do not say readOnlyHint: true (the policy of client cursor)"
		deleted = "tairseach_notes_delete | notes.delete | notes.delete"
		listed  = "tairseach_notes_list | notes.list | notes.list"
		imports = "tairseach_notes_import | notes.import | notes.import"
	)
	for _, tt := range []struct {
		query                string
		served, unserved     []string
		cost                 string
		selected, notPresent string
	}{
		{"", []string{deleted, listed, imports}, []string{twice, hidden, orphan}, "1051 1200 3", `<option value="" selected>the bridge's own list</option>`, notRO},
		{"?client=claude", []string{deleted, listed, imports}, []string{twice, hidden, orphan}, "1051 1200 3", `<option value="claude" selected>client claude</option>`, notRO},
		{"?client=cursor", []string{listed}, []string{
			"tairseach_notes_delete | notes.delete | notes.json | " + notRO,
			twice, hidden,
			"tairseach_notes_import | notes.import | notes.json | " + notRO,
			orphan,
		}, "1017 400 1", `<option value="cursor" selected>client cursor</option>`, `<option value="" selected>`},
	} {
		b.do("GET", "/ui/tools"+tt.query, nil) // measures the list, once
		_, body := b.do("GET", "/ui/tools"+tt.query, nil)
		served, unserved, cost := toolsOn(t, body)
		slices.Sort(unserved)
		want := slices.Sorted(slices.Values(tt.unserved))
		if !slices.Equal(served, tt.served) || !slices.Equal(unserved, want) || cost != tt.cost {
			t.Errorf("tools%s: served\n%s\nwant\n%s\nnot served\n%s\nwant\n%s\ncost %q, want %q",
				tt.query, strings.Join(served, "\n"), strings.Join(tt.served, "\n"), strings.Join(unserved, "\n"), strings.Join(want, "\n"), cost, tt.cost)
		}
		if !strings.Contains(body, tt.selected) || strings.Contains(body, tt.notPresent) {
			t.Errorf("tools%s: the view is not the one asked for (%s):\n%s", tt.query, tt.selected, body)
		}
		if !strings.Contains(body, "<h2>Served ("+strconv.Itoa(len(tt.served))+")</h2>") || !strings.Contains(body, "<h2>Not served ("+strconv.Itoa(len(tt.unserved))+")</h2>") {
			t.Errorf("tools%s: the headings do not count %d served, %d not:\n%s", tt.query, len(tt.served), len(tt.unserved), body)
		}
	}
	if !slices.Equal(measured, []int{3, 3, 1}) {
		t.Errorf("the lists measured: %v, want the bridge's (3 tools), claude's (3), then cursor's (1), each once", measured)
	}
}

// A list whose cost cannot be measured says why.
func TestContentToolsCostNotMeasured(t *testing.T) {
	listCost := func(context.Context, protocol.ToolProvider) (int, int, error) {
		return 0, 0, errors.New("no tokenizer for this model")
	}
	f := newContentFixture(t, Options{ListCost: listCost}, nil, nil)
	b := f.browser(t)
	b.login()
	_, body := b.do("GET", "/ui/tools", nil)
	if !strings.Contains(body, "Not measured: no tokenizer for this model</p>") {
		t.Errorf("a cost not measured does not say why:\n%s", body)
	}
	f = newContentFixture(t, Options{}, nil, nil)
	b = f.browser(t)
	b.login()
	if _, body := b.do("GET", "/ui/tools", nil); strings.Contains(body, `class="cost"`) {
		t.Errorf("a cost shown without ListCost:\n%s", body)
	}
}

// clientRowRE matches a row of the clients page: name, named, policy,
// sessions, versions, calls, errors, last use.
var clientRowRE = regexp.MustCompile(`<tr><td>([^<]*?)( <span class="tag">named</span>)?</td><td>([^<]*)</td><td>(\d+)</td><td>([^<]*)</td><td>(\d+)</td><td>(\d+)</td><td>([^<]*)</td></tr>`)

func clientsOn(body string) map[string][]string {
	out := map[string][]string{}
	for _, m := range clientRowRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2:]
	}
	return out
}

var secondsAgoRE = regexp.MustCompile(`^\d+s ago$`)

// With a clients file, the clients page lists the named clients (those
// that did not call too), with their policy, sessions, what their
// programs say they are, their calls, errors and last use; and any other
// client that called.
func TestContentClientsNamed(t *testing.T) {
	f := newContentFixture(t, Options{}, nil, withClients(t, map[string]clients.Policy{
		"cursor": {ReadOnly: true}, "claude": {}, "zed": {Exclude: []string{"*delete*"}}}))
	set := f.c.opts.Clients
	cursor, _ := set.Client("cursor")
	claude, _ := set.Client("claude")

	s := newTaskSession(t, f, cursor.Session(), "Cursor")
	for range 2 {
		if res := s.request("tools/call", `{"name":"tairseach_notes_list","arguments":{}}`); !strings.Contains(res, "Permission denied") {
			t.Fatalf("cursor's call: %s", res)
		}
	}
	for range 3 {
		callTool(t, claude.View(), claude.Principal(), "Claude Code", "tairseach_notes_delete", `{"id":"n-1"}`)
	}
	callTool(t, claude.View(), claude.Principal(), "Claude Code", "tairseach_notes_list", "")
	callTool(t, f.reg, protocol.Principal{}, "Aider", "tairseach_notes_delete", `{"id":"n-2"}`)

	b := f.browser(t)
	b.login()
	_, body := b.do("GET", "/ui/clients", nil)
	if !strings.Contains(body, "The named clients of the clients file, and any other that called.") {
		t.Errorf("the page does not say the clients are those of the clients file:\n%s", body)
	}
	rows := clientsOn(body)
	for name, want := range map[string][]string{
		"cursor": {` <span class="tag">named</span>`, "read-only", "1", "Cursor 1", "2", "2"},
		"claude": {` <span class="tag">named</span>`, "every right of the bridge", "0", "", "4", "1"},
		"zed":    {` <span class="tag">named</span>`, "exclude *delete*", "0", "", "0", "0", "not since the bridge started"},
		"Aider":  {"", "", "0", "", "1", "0"},
	} {
		got := rows[name]
		if len(got) != 7 || !slices.Equal(got[:len(want)], want) || len(want) == 6 && !secondsAgoRE.MatchString(got[6]) {
			t.Errorf("client %s: %q, want %q (and a last use seconds ago)", name, got, want)
		}
	}
	if len(rows) != 4 {
		t.Errorf("the clients: %v, want cursor, claude, zed and Aider", rows)
	}
}

// Without a clients file, the clients page lists the clients as they call
// themselves: their sessions, calls, errors and last use.
func TestContentClientsByClientInfo(t *testing.T) {
	f := newContentFixture(t, Options{}, nil, nil)
	s := newTaskSession(t, f, protocol.SessionOptions{Transport: "stdio"}, "Zed")
	if res := s.request("tools/call", `{"name":"tairseach_notes_delete","arguments":{"id":"n-1"}}`); !strings.Contains(res, `\"ok\":true`) {
		t.Fatalf("Zed's call: %s", res)
	}
	newTaskSession(t, f, protocol.SessionOptions{Transport: "stdio"}, "Zed")
	newTaskSession(t, f, protocol.SessionOptions{Transport: "stdio"}, "Idle")
	callTool(t, f.reg, protocol.Principal{}, "Claude Code", "tairseach_notes_list", "")

	b := f.browser(t)
	b.login()
	_, body := b.do("GET", "/ui/clients", nil)
	if !strings.Contains(body, "No clients file: clients as they call themselves (their <code>clientInfo</code>), unchecked.") {
		t.Errorf("the page does not say there is no clients file:\n%s", body)
	}
	rows := clientsOn(body)
	for name, want := range map[string][]string{
		"Zed":         {"", "", "2", "Zed 1", "1", "0"},
		"Claude Code": {"", "", "0", "", "1", "1"},
		"Idle":        {"", "", "1", "Idle 1", "0", "0", "not since the bridge started"},
	} {
		got := rows[name]
		if len(got) != 7 || !slices.Equal(got[:len(want)], want) || len(want) == 6 && !secondsAgoRE.MatchString(got[6]) {
			t.Errorf("client %s: %q, want %q (and a last use seconds ago)", name, got, want)
		}
	}
	if len(rows) != 3 || strings.Contains(body, `<span class="tag">named</span>`) {
		t.Errorf("the clients: %v, want Zed, Claude Code and Idle, none named", rows)
	}
}

// writeAudit writes entries to an audit log in dir, as a Writer does:
// one JSON line each, with a line that counts entries lost (not a call)
// after the second.
func writeAudit(t *testing.T, entries []audit.Entry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	var b strings.Builder
	for i, e := range entries {
		e.ID, e.PID = "3f9a1c2e-"+strconv.Itoa(i), 4242
		if e.Kind == "" {
			e.Kind = audit.KindTool
		}
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
		if i == 1 {
			b.WriteString(`{"time":"` + e.Time + `","id":"3f9a1c2e-x","pid":4242,"kind":"dropped","dur_ms":0,"dropped":3,"bytes_in":0,"bytes_out":0}` + "\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// callsLog is the audit log of five calls, the oldest first, by cursor
// (a named client) and Claude Desktop (what a client calls itself).
func callsLog(t *testing.T) string {
	now := time.Now().Add(-time.Minute)
	at := func(i int) string { return audit.Timestamp(now.Add(time.Duration(i) * time.Second)) }
	return writeAudit(t, []audit.Entry{
		{Time: at(0), Principal: "client:cursor", Client: "Cursor", Name: "tairseach_notes_delete", ManifestName: "notes.delete", Duration: 12, Outcome: "ok", Args: jsontext.Value(`{"id":"n-1"}`)},
		{Time: at(1), Principal: "process", Client: "Claude Desktop", Name: "tairseach_notes_list", ManifestName: "notes.list", Duration: 3, Outcome: "backend_error", Args: jsontext.Value(`{"folder":"inbox"}`)},
		{Time: at(2), Principal: "client:cursor", Client: "Cursor", Name: "tairseach_notes_list", ManifestName: "notes.list", Duration: 4, Outcome: "backend_error", Args: jsontext.Value(`{"limit":5}`)},
		{Time: at(3), Principal: "process", Client: "Claude Desktop", Name: "tairseach_notes_delete", ManifestName: "notes.delete", Duration: 15, Outcome: "ok", Args: jsontext.Value(`{"id":"n-2"}`)},
		{Time: at(4), Principal: "client:cursor", Client: "Cursor", Name: "tairseach_notes_import", ManifestName: "notes.import", Duration: 1500, Outcome: "invalid_arguments", Args: jsontext.Value(`{"path":"/tmp/x"}`)},
	})
}

// recentRowRE matches a row of the recent calls: failed, tool,
// principal, client, outcome, duration, and the arguments when shown.
var recentRowRE = regexp.MustCompile(`<tr( class="failed")?><td>[^<]*</td><td>([^<]*)</td><td title="([^"]*)">([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>[^<]*</td>(?:<td><code>([^<]*)</code></td>)?</tr>`)

// recentOn returns the recent calls a calls page lists, the newest first:
// tool, client, outcome, duration, and arguments when shown, with
// "failed" for a row marked so.
func recentOn(body string) []string {
	var out []string
	for _, m := range recentRowRE.FindAllStringSubmatch(body, -1) {
		row := strings.Join([]string{m[2], m[4], m[5], m[6]}, " | ")
		if m[7] != "" {
			row += " | " + m[7]
		}
		if m[1] != "" {
			row += " (failed)"
		}
		out = append(out, row)
	}
	return out
}

// The calls page lists the recent calls of the audit log, the newest
// first, filtered by tool, client and outcome; with the arguments'
// values when the log holds them (--audit-values).
func TestContentCallsFromTheAuditLog(t *testing.T) {
	log := callsLog(t)
	f := newContentFixture(t, Options{AuditLog: log, AuditValues: true}, nil, nil)
	b := f.browser(t)
	b.login()
	var (
		importRow  = "tairseach_notes_import | cursor | invalid_arguments | 1.5s | {&#34;path&#34;:&#34;/tmp/x&#34;} (failed)"
		deleteRow2 = "tairseach_notes_delete | Claude Desktop | ok | 15ms | {&#34;id&#34;:&#34;n-2&#34;}"
		listRow2   = "tairseach_notes_list | cursor | backend_error | 4.0ms | {&#34;limit&#34;:5} (failed)"
		listRow1   = "tairseach_notes_list | Claude Desktop | backend_error | 3.0ms | {&#34;folder&#34;:&#34;inbox&#34;} (failed)"
		deleteRow1 = "tairseach_notes_delete | cursor | ok | 12ms | {&#34;id&#34;:&#34;n-1&#34;}"
	)
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", []string{importRow, deleteRow2, listRow2, listRow1, deleteRow1}},
		{"?outcome=backend_error", []string{listRow2, listRow1}},
		{"?outcome=ok", []string{deleteRow2, deleteRow1}},
		{"?client=cursor", []string{importRow, listRow2, deleteRow1}},
		{"?client=Claude+Desktop", []string{deleteRow2, listRow1}},
		{"?tool=tairseach_notes_delete", []string{deleteRow2, deleteRow1}},
		{"?tool=notes.l*", []string{listRow2, listRow1}},
		{"?client=cursor&outcome=backend_error&tool=list", []string{listRow2}},
		{"?client=nobody", nil},
	} {
		_, body := b.do("GET", "/ui/calls"+tt.query, nil)
		if got := recentOn(body); !slices.Equal(got, tt.want) {
			t.Errorf("calls%s:\n%s\nwant:\n%s", tt.query, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		if !strings.Contains(body, "From the last 5 entries of the audit log "+escaped(log)+" (every bridge that writes to it): "+strconv.Itoa(len(tt.want))+" match") {
			t.Errorf("calls%s: the page does not say %d of the log's 5 entries match:\n%s", tt.query, len(tt.want), body)
		}
		if len(tt.want) == 0 && !strings.Contains(body, "No call matches.") {
			t.Errorf("calls%s: no row, and no word of it:\n%s", tt.query, body)
		}
	}
	// The filters offer what the log holds, and keep what was chosen.
	_, body := b.do("GET", "/ui/calls?client=cursor&outcome=backend_error", nil)
	for _, want := range []string{
		`<option value="Claude Desktop">Claude Desktop</option><option value="cursor" selected>cursor</option></select>`,
		`<option value="backend_error" selected>backend_error</option><option value="invalid_arguments">invalid_arguments</option><option value="ok">ok</option></select>`,
		`<option value="tairseach_notes_delete"><option value="tairseach_notes_import"><option value="tairseach_notes_list"></datalist>`,
		`<th>Arguments</th>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the calls page has no %s:\n%s", want, body)
		}
	}
}

// Without --audit-values the calls page shows no argument, even of a log
// that holds them.
func TestContentCallsWithoutAuditValues(t *testing.T) {
	f := newContentFixture(t, Options{AuditLog: callsLog(t)}, nil, nil)
	b := f.browser(t)
	b.login()
	_, body := b.do("GET", "/ui/calls", nil)
	want := []string{
		"tairseach_notes_import | cursor | invalid_arguments | 1.5s (failed)",
		"tairseach_notes_delete | Claude Desktop | ok | 15ms",
		"tairseach_notes_list | cursor | backend_error | 4.0ms (failed)",
		"tairseach_notes_list | Claude Desktop | backend_error | 3.0ms (failed)",
		"tairseach_notes_delete | cursor | ok | 12ms",
	}
	if got := recentOn(body); !slices.Equal(got, want) {
		t.Errorf("the calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, leak := range []string{"<th>Arguments</th>", "<code></code>", "n-1", "inbox", "/tmp/x", "limit"} {
		if strings.Contains(body, leak) {
			t.Errorf("without --audit-values the page shows %s:\n%s", leak, body)
		}
	}
	// Nor does what the page is drawn from hold them.
	for _, r := range f.c.callsPage(httptest.NewRequest("GET", "/ui/calls", nil)).Recent {
		if r.Args != "" {
			t.Errorf("without --audit-values a call's row holds its arguments: %+v", r)
		}
	}
}

// A task's lines in the audit log (kind task: created, then how it
// ended) are not calls: audit.Summarize counts them apart. The calls page
// and the charts do not list or count them as calls, nor as errors.
func TestContentTaskLinesAreNotCalls(t *testing.T) {
	now := time.Now().Add(-time.Minute)
	task := func(outcome string, ago time.Duration) audit.Entry {
		return audit.Entry{Time: audit.Timestamp(now.Add(-ago)), Kind: audit.KindTask, Principal: "client:cursor", Client: "Cursor",
			Name: "tairseach_notes_import", ManifestName: "notes.import", Method: "notes.import", Task: "0f1e2d3c", Duration: 900, Outcome: outcome}
	}
	log := writeAudit(t, []audit.Entry{
		task(audit.TaskCreated, 2*time.Second),
		{Time: audit.Timestamp(now.Add(-time.Second)), Principal: "client:cursor", Client: "Cursor", Name: "tairseach_notes_import", ManifestName: "notes.import",
			Duration: 900, Outcome: "ok", Task: "0f1e2d3c"},
		task("completed", 0),
	})
	f := newContentFixture(t, Options{AuditLog: log}, nil, nil)
	b := f.browser(t)
	b.login()
	_, body := b.do("GET", "/ui/calls", nil)
	if got := recentOn(body); strings.Join(got, "\n") != "tairseach_notes_import | cursor | ok | 900ms" {
		t.Errorf("a call run as a task, the calls page lists:\n%s", strings.Join(got, "\n"))
	}
	_, body = b.do("GET", "/ui/charts", nil)
	if cs := chartsOn(t, body); len(cs) != 3 || cs[0].legend["tairseach_notes_import"] != "1" || cs[1].legend["tairseach_notes_import"] != "0" {
		var legends []map[string]string
		for _, c := range cs {
			legends = append(legends, c.legend)
		}
		t.Errorf("a call run as a task, the charts' legends: %v, want 1 call, 0 errors", legends)
	}
}

// waitForLine waits for a line of the stream holding every one of subs,
// and returns it.
func waitForLine(t *testing.T, lines <-chan string, subs ...string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended before a line with %q", subs)
			}
			if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(l, s) }) {
				return l
			}
		case <-deadline:
			t.Fatalf("no line with %q on the stream", subs)
		}
	}
}

var seqRE = regexp.MustCompile(`"seq":(\d+)`)

// The calls page shows the calls live as they start and end: its table
// of calls in flight, and its event stream, which tells the same call
// (by its seq) starting and ending, and how it ended; without an audit
// log, the recent calls are this bridge's.
func TestContentCallsLive(t *testing.T) {
	gate := make(chan struct{})
	f := newContentFixture(t, Options{}, gate, nil)
	b := f.browser(t)
	b.login()
	stream := b.openStream(t)
	waitForLine(t, stream, "event: stats")

	done := make(chan struct{})
	// Ends once gate is closed.
	go func() {
		defer close(done)
		call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: "Cursor"}, Transport: "stdio"})
		_, _ = f.reg.CallTool(context.Background(), call, &protocol.CallToolRequest{Name: "tairseach_notes_import"})
	}()
	started := waitForLine(t, stream, `"state":"running"`, `"name":"tairseach_notes_import"`, `"client":"Cursor"`, `"transport":"stdio"`)
	_, body := b.do("GET", "/ui/calls", nil)
	if got := liveRows(body); strings.Join(got, "\n") != "tairseach_notes_import | Cursor | running" {
		t.Errorf("a call in flight, the live table shows %q", got)
	}
	if !strings.Contains(body, "From this bridge&#39;s last 0 calls") || len(recentOn(body)) != 0 {
		t.Errorf("a call in flight is not among the recent calls:\n%s", body)
	}
	close(gate)
	<-done
	ended := waitForLine(t, stream, `"state":"ended"`, `"name":"tairseach_notes_import"`, `"outcome":"ok"`, `"client":"Cursor"`)
	if s, e := seqRE.FindStringSubmatch(started), seqRE.FindStringSubmatch(ended); s == nil || e == nil || s[1] != e[1] {
		t.Errorf("the call that ended is not the one that started:\n%s\n%s", started, ended)
	}
	callTool(t, f.reg, protocol.Principal{}, "Cursor", "tairseach_notes_list", "")
	waitForLine(t, stream, `"state":"ended"`, `"name":"tairseach_notes_list"`, `"outcome":"backend_error"`, `"failed":true`)

	_, body = b.do("GET", "/ui/calls", nil)
	if got := liveRows(body); len(got) != 0 {
		t.Errorf("no call in flight, the live table shows %q", got)
	}
	want := []string{"tairseach_notes_list | Cursor | backend_error", "tairseach_notes_import | Cursor | ok"}
	var got []string
	for _, r := range recentOn(body) {
		got = append(got, strings.Join(strings.Split(r, " | ")[:3], " | "))
	}
	if !slices.Equal(got, want) || !strings.Contains(body, "From this bridge&#39;s last 2 calls") {
		t.Errorf("the recent calls of this bridge:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), body)
	}
}

// chartOf is one chart as a page draws it: its title, and its lines by
// name, with their points and what the legend says of each.
type chartOf struct {
	title  string
	points map[string][][2]float64
	legend map[string]string
}

var (
	captionRE  = regexp.MustCompile(`<figcaption>([^<]*)</figcaption>`)
	polylineRE = regexp.MustCompile(`<polyline class="line (s\d)" points="([^"]*)"></polyline>`)
	legendRE   = regexp.MustCompile(`<li><span class="swatch (s\d)"></span>([^<]*) <span class="muted">([^<]*)</span></li>`)
)

func chartsOn(t *testing.T, body string) []chartOf {
	t.Helper()
	var out []chartOf
	for _, fig := range strings.Split(body, `<figure class="chart">`)[1:] {
		if !strings.Contains(fig, `<svg viewBox="0 0 640 170"`) || !strings.Contains(fig, `xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("a chart is no SVG:\n%s", fig)
		}
		c := chartOf{points: map[string][][2]float64{}, legend: map[string]string{}}
		if m := captionRE.FindStringSubmatch(fig); m != nil {
			c.title = m[1]
		}
		names := map[string]string{} // by class
		for _, m := range legendRE.FindAllStringSubmatch(fig, -1) {
			names[m[1]] = m[2]
			c.legend[m[2]] = m[3]
		}
		for _, m := range polylineRE.FindAllStringSubmatch(fig, -1) {
			var ps [][2]float64
			for _, xy := range strings.Fields(m[2]) {
				x, y, _ := strings.Cut(xy, ",")
				fx, err1 := strconv.ParseFloat(x, 64)
				fy, err2 := strconv.ParseFloat(y, 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("a point %q", xy)
				}
				ps = append(ps, [2]float64{fx, fy})
			}
			c.points[names[m[1]]] = ps
		}
		out = append(out, c)
	}
	return out
}

// raised returns the indexes of the points above the chart's zero line,
// and their heights.
func raised(ps [][2]float64) (idx []int, ys []float64) {
	const zero = padTop + chartH - padTop - padBottom // y of 0
	for i, p := range ps {
		if p[1] != zero {
			idx, ys = append(idx, i), append(ys, p[1])
		}
	}
	return idx, ys
}

// The charts page draws, as SVG on the server, the calls, errors and 95th
// percentile of durations per minute of the audit log's last hour, one
// line per tool or per client, each with its total (calls, errors) or
// its worst minute (p95) in the legend, and a point per minute.
func TestContentCharts(t *testing.T) {
	minute := time.Now().Truncate(time.Minute)
	var entries []audit.Entry
	add := func(ago int, n int, principal, client, name string, dur func(i int) float64, outcome func(i int) string) {
		for i := range n {
			entries = append(entries, audit.Entry{Time: audit.Timestamp(minute.Add(time.Duration(-ago)*time.Minute + time.Duration(i)*time.Millisecond)),
				Principal: principal, Client: client, Name: name, Duration: dur(i), Outcome: outcome(i)})
		}
	}
	ok := func(int) string { return "ok" }
	// notes.list by cursor: 2 calls 20 minutes ago (5 and 7 ms), 20 calls
	// 5 minutes ago (10 to 200 ms, 4 of them failed); notes.delete by
	// Claude Desktop: 3 calls 10 minutes ago (1 to 3 ms); and a call of
	// two hours ago, out of the charts.
	add(20, 2, "client:cursor", "Cursor", "tairseach_notes_list", func(i int) float64 { return float64(5 + 2*i) }, ok)
	add(10, 3, "process", "Claude Desktop", "tairseach_notes_delete", func(i int) float64 { return float64(1 + i) }, ok)
	add(5, 20, "client:cursor", "Cursor", "tairseach_notes_list", func(i int) float64 { return float64(10 * (i + 1)) }, func(i int) string {
		if i%5 == 0 {
			return "backend_error"
		}
		return "ok"
	})
	add(120, 1, "process", "Claude Desktop", "tairseach_notes_import", func(int) float64 { return 9000 }, func(int) string { return "timeout" })
	f := newContentFixture(t, Options{AuditLog: writeAudit(t, entries)}, nil, nil)
	b := f.browser(t)
	b.login()

	y := func(v, top float64) float64 { // as draw places v under a top of top
		return float64(int((padTop+(chartH-padTop-padBottom)*(1-v/top))*10+0.5)) / 10
	}
	for _, by := range []struct{ query, list, del string }{
		{"", "tairseach_notes_list", "tairseach_notes_delete"},
		{"?by=client", "cursor", "Claude Desktop"},
	} {
		_, body := b.do("GET", "/ui/charts"+by.query, nil)
		cs := chartsOn(t, body)
		if len(cs) != 3 || strings.Count(body, "<svg") != 3 {
			t.Fatalf("charts%s: %d charts, want 3:\n%s", by.query, len(cs), body)
		}
		for i, want := range []struct {
			title         string
			list, del     string    // the legends
			listYs, delYs []float64 // the heights of the raised points
			listGap       int       // minutes between the two raised points of list
		}{
			{title: "Calls per minute", list: "22", del: "3", listYs: []float64{y(2, 20), y(20, 20)}, delYs: []float64{y(3, 20)}, listGap: 15},
			{title: "Errors per minute", list: "4", del: "0", listYs: []float64{y(4, 5)}, delYs: nil},
			{title: "95th percentile of durations", list: "190ms", del: "3.0ms", listYs: []float64{y(7, 200), y(190, 200)}, delYs: []float64{y(3, 200)}, listGap: 15},
		} {
			c := cs[i]
			if c.title != want.title || len(c.points) != 2 || len(c.legend) != 2 || c.legend[by.list] != want.list || c.legend[by.del] != want.del {
				t.Errorf("charts%s, %s: title %q, legend %v, want %s %s and %s %s", by.query, want.title, c.title, c.legend, by.list, want.list, by.del, want.del)
				continue
			}
			for name, ys := range map[string][]float64{by.list: want.listYs, by.del: want.delYs} {
				ps := c.points[name]
				if len(ps) != chartMinutes {
					t.Errorf("charts%s, %s, %s: %d points, want one a minute, %d", by.query, want.title, name, len(ps), chartMinutes)
				}
				idx, got := raised(ps)
				if !slices.Equal(got, ys) {
					t.Errorf("charts%s, %s, %s: raised points at %v, want %v", by.query, want.title, name, got, ys)
				}
				if name == by.list && want.listGap != 0 && (len(idx) != 2 || idx[1]-idx[0] != want.listGap) {
					t.Errorf("charts%s, %s, %s: raised points at minutes %v, want %d apart", by.query, want.title, name, idx, want.listGap)
				}
			}
		}
		if strings.Contains(body, "tairseach_notes_import") {
			t.Errorf("charts%s: a call of two hours ago is drawn:\n%s", by.query, body)
		}
	}
}
