package console

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// importManifest declares notes.import, which may run as a task.
const importManifest = `{"id":"notes","tools":[
 {"name":"notes.import","description":"Imports notes.","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}
],"implementation":{"methods":{"notes.import":"notes.import"}}}`

// gate is a backend whose calls wait until it is closed, then answer, or
// until their call ends.
type gate chan struct{}

func (g gate) Call(ctx context.Context, _ string, _ jsontext.Value, _ socketclient.Call) (jsontext.Value, error) {
	select {
	case <-g:
		return jsontext.Value(`{"imported":3}`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sink hands over the response to a request.
type sink chan string

func (s sink) Send(m protocol.Message) {
	b, final := string(m.Bytes()), m.Final()
	m.Release()
	if final {
		s <- b
	}
}

// taskSession is a 2025-11-25 session of the fixture's protocol server,
// as a transport makes one.
type taskSession struct {
	t  *testing.T
	ss *protocol.Session
	id int
}

func newTaskSession(t *testing.T, f *fixture, o protocol.SessionOptions, client string) *taskSession {
	t.Helper()
	ss := f.ps.NewSession(make(sink, 64), o)
	t.Cleanup(ss.Close)
	s := &taskSession{t: t, ss: ss}
	s.request("initialize", fmt.Sprintf(`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":%q,"version":"1"}}`, client))
	return s
}

// request sends a request and returns its response.
func (s *taskSession) request(method, params string) string {
	s.t.Helper()
	s.id++
	out := make(sink, 1)
	if err := s.ss.Handle(s.t.Context(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, params), out); err != nil {
		s.t.Fatal(err)
	}
	return <-out
}

var taskIDRE = regexp.MustCompile(`"taskId":"([0-9a-f]+)"`)

// startTask calls notes.import as a task, and returns the task's id.
func (s *taskSession) startTask() string {
	s.t.Helper()
	res := s.request("tools/call", `{"name":"tairseach_notes_import","arguments":{},"task":{}}`)
	m := taskIDRE.FindStringSubmatch(res)
	if m == nil || !strings.Contains(res, `"status":"working"`) {
		s.t.Fatalf("no task working: %s", res)
	}
	return m[1]
}

// taskRowRE matches a row of the live tasks: its client, status and
// message.
var taskRowRE = regexp.MustCompile(`<tr(?: class="[a-z]+")?><td class="tool">tairseach_notes_import</td><td>([^<]*)(?: <span class="tag"[^>]*>([^<]*)</span>)?</td><td class="state">([^<]*)</td><td class="message">([^<]*)</td><td>\d+s</td><td>[12]h \d\dm</td></tr>`)

// tasksOn returns the live tasks a page lists: client, owner when it is
// not the client, status and message of each.
func tasksOn(body string) []string { return rowsOf(taskRowRE, body) }

// The questions page lists the live tasks of every owner, a named client
// by its name, with their status: working, then ended (an ended task
// stays listed); the overview and the event stream count them. What a
// client calls itself is shown as text.
func TestTheQuestionsPageListsTheLiveTasks(t *testing.T) {
	backend := make(gate)
	f := newFixtureOf(t, Options{}, importManifest, backend)
	b := f.browser(t)
	b.login()
	if _, body := b.do("GET", "/ui/questions", nil); !strings.Contains(body, "No live task.") {
		t.Errorf("no task yet, and no empty list:\n%s", body)
	}

	cursor := newTaskSession(t, f, protocol.SessionOptions{Transport: "http", Principal: protocol.Principal{Kind: protocol.PrincipalClient, ID: "cursor"}}, "Cursor")
	first := cursor.startTask()
	other := newTaskSession(t, f, protocol.SessionOptions{Transport: "stdio"}, hostile)
	second := other.startTask()
	var session string // the owner of the second: its session
	for _, ss := range f.ps.Stats().Sessions {
		if ss.Principal.Kind == protocol.PrincipalSession {
			session = ss.Principal.String()
		}
	}
	escaped := "&lt;img src=x onerror=alert(1)&gt;"

	_, body := b.do("GET", "/ui/questions", nil)
	want := []string{"cursor |  | working | ", escaped + " | " + session + " | working | "}
	if got := tasksOn(body); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("two tasks working, the page lists:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), body)
	}
	if strings.Contains(body, "<img") || strings.Contains(body, "No live task.") {
		t.Errorf("the page shows a client's tag, or no task:\n%s", body)
	}
	stream := b.openStream(t)
	waitForLine(t, stream, `"tasks":2,"tasksrunning":2`)

	if res := other.request("tasks/cancel", `{"taskId":"`+second+`"}`); !strings.Contains(res, `"status":"cancelled"`) {
		t.Fatalf("cancelling the second: %s", res)
	}
	close(backend) // the first completes
	if res := cursor.request("tasks/result", `{"taskId":"`+first+`"}`); !strings.Contains(res, `\"imported\":3`) {
		t.Fatalf("the first task's result: %s", res)
	}
	_, part := b.do("GET", "/ui/questions?part=tasks", nil)
	want = []string{"cursor |  | completed | ", escaped + " | " + session + " | cancelled | The task was cancelled by request."}
	if got := tasksOn(part); strings.Join(got, "\n") != strings.Join(want, "\n") || strings.Contains(part, "<main>") {
		t.Errorf("the tasks ended, the list (alone) shows:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), part)
	}
	_, overview := b.do("GET", "/ui/", nil)
	if !strings.Contains(overview, `<span data-stat="tasksrunning">0</span> running, <span data-stat="tasks">2</span> kept`) {
		t.Errorf("the overview does not count 2 tasks, none running:\n%s", overview)
	}
}

func TestSpanSaysADurationForAPerson(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{1400 * time.Millisecond, "1s"},
		{59 * time.Second, "59s"},
		{61 * time.Second, "1m 01s"},
		{59*time.Minute + 59*time.Second + 600*time.Millisecond, "1h 00m"},
		{2*time.Hour - time.Minute, "1h 59m"},
		{26 * time.Hour, "26h 00m"},
	} {
		if got := span(tt.d); got != tt.want {
			t.Errorf("span(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
