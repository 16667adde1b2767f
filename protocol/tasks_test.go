package protocol

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
)

// wire is the Sink of one request, as a transport's: it records each
// message as it would be written, checked against the schema of its
// version, releases it, and hands over the response.
type wire struct {
	t       *testing.T
	checker *protocoltest.Checker
	sent    chan string // every message but the response, as long as there is room
	final   chan string
}

func newWire(t *testing.T, checker *protocoltest.Checker) *wire {
	return &wire{t: t, checker: checker, sent: make(chan string, 256), final: make(chan string, 1)}
}

func (w *wire) Send(m Message) {
	b := string(m.Bytes())
	final := m.Final()
	m.Release()
	if b != "" {
		if err := w.checker.ServerLine([]byte(b)); err != nil {
			w.t.Errorf("invalid message %.300s\n  %v", b, err)
		}
	}
	switch {
	case final:
		w.final <- b
	case b != "":
		select {
		case w.sent <- b:
		default:
		}
	}
}

// taskClient sends requests to one session, as a client whose tasks are
// owner's, and waits for their answers.
type taskClient struct {
	t       *testing.T
	ss      *Session
	out     *wire // the session's own stream
	checker *protocoltest.Checker
}

func newTaskClient(t *testing.T, srv *Server, owner Principal, version string) *taskClient {
	checker := protocoltest.NewChecker(version)
	out := newWire(t, checker)
	ss := srv.NewSession(out, SessionOptions{Transport: "test", TaskOwner: owner})
	t.Cleanup(ss.Close)
	c := &taskClient{t: t, ss: ss, out: out, checker: checker}
	if version != ModernVersion {
		c.call(initLine(0, version))
	}
	return c
}

// call sends line and returns the response.
func (c *taskClient) call(line string) string {
	c.t.Helper()
	c.checker.ClientLine([]byte(line))
	w := newWire(c.t, c.checker)
	if err := c.ss.Handle(c.t.Context(), []byte(line), w); err != nil {
		c.t.Fatalf("Handle: %v", err)
	}
	return <-w.final
}

// start sends line and returns the stream of its answer.
func (c *taskClient) start(line string) *wire {
	c.checker.ClientLine([]byte(line))
	w := newWire(c.t, c.checker)
	if err := c.ss.Handle(c.t.Context(), []byte(line), w); err != nil {
		c.t.Fatalf("Handle: %v", err)
	}
	return w
}

// taskView is what a test reads of a task or a CreateTaskResult, in
// either generation.
type taskView struct {
	Task          *taskView      `json:"task"`
	TaskID        string         `json:"taskId"`
	Status        string         `json:"status"`
	StatusMessage string         `json:"statusMessage"`
	ResultType    string         `json:"resultType"`
	Result        jsontext.Value `json:"result"`
	Error         *Error         `json:"error"`
	InputRequests jsontext.Value `json:"inputRequests"`
	Content       []Content      `json:"content"`
	Data          map[string]any `json:"data"`
	Meta          jsontext.Value `json:"_meta"`
}

// answer decodes a response: its result, or its error.
func answer(t *testing.T, resp string) (taskView, *Error) {
	t.Helper()
	var r struct {
		Result *taskView `json:"result"`
		Error  *Error    `json:"error"`
	}
	if err := json.Unmarshal([]byte(resp), &r, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("%s: %v", resp, err)
	}
	if r.Result == nil {
		return taskView{}, r.Error
	}
	if r.Result.Task != nil { // 2025-11-25's CreateTaskResult
		return *r.Result.Task, nil
	}
	return *r.Result, nil
}

func legacyCall(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"task":{}}}`, id, tool, args)
}

func legacyReq(id int, method, taskID string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"taskId":%q}}`, id, method, taskID)
}

const tasksCaps = `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`

func modernTaskReq(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",%s}}}`, id, method, params, tasksCaps)
}

func taskServer() *Server {
	srv := newTestServer(&fakeTools{set: NewToolSet(append(testTools().Tools(), taskTools()...)), calls: testCalls})
	srv.TaskAfter = 10 * time.Millisecond
	return srv
}

// The tasks kept are bounded in all and per owner: of 10,000 tasks asked
// for, as many are created as the bounds allow; the others of a tool that
// allows tasks run as ordinary calls, and those of a tool that requires
// them are refused with -32603 and data.retryAfterMs. Nothing else is
// kept.
func TestTasksAreBoundedInAllAndPerOwner(t *testing.T) {
	srv := taskServer()
	srv.MaxTasks, srv.MaxTasksPerOwner = 300, 100
	owners := []*taskClient{}
	for i := range 4 {
		owners = append(owners, newTaskClient(t, srv, Principal{Kind: PrincipalToken, ID: fmt.Sprint(i)}, Version20251125))
	}
	// run makes n calls of c, half of a tool that may run as a task and
	// half of one that must, and counts how they went: refusals must say
	// whose bound they reached.
	id := 0
	run := func(c *taskClient, n int, whose string) (created, ordinary, refused int) {
		t.Helper()
		for range n {
			id++
			tool := "t_quick"
			if id%2 == 0 {
				tool = "t_must"
			}
			r, err := answer(t, c.call(legacyCall(id, tool, `{"s":0}`)))
			switch {
			case err != nil:
				if err.Code != CodeInternalError || !strings.Contains(err.Message, "too many tasks: "+whose+" already keeps") || !strings.Contains(string(err.Data), "retryAfterMs") {
					t.Fatalf("call %d refused with %+v; want %s's bound", id, err, whose)
				}
				refused++
			case r.TaskID != "":
				created++
			case len(r.Content) == 1:
				ordinary++
			default:
				t.Fatalf("call %d: %+v", id, r)
			}
		}
		return created, ordinary, refused
	}
	// One owner alone reaches its own bound, far below the server's.
	if created, ordinary, refused := run(owners[0], 1_000, "this client"); created != 100 || ordinary == 0 || refused == 0 {
		t.Errorf("one owner: created %d tasks, %d ordinary calls, %d refused; want 100 tasks, the rest ordinary or refused", created, ordinary, refused)
	}
	// The others share what is left of the server's.
	created, ordinary, refused := 0, 0, 0
	for i := range 9_000 {
		c, o, r := run(owners[1+i%3], 1, "the server")
		created, ordinary, refused = created+c, ordinary+o, refused+r
	}
	if created != 200 || ordinary == 0 || refused == 0 {
		t.Errorf("three more owners: created %d tasks, %d ordinary calls, %d refused; want 200 tasks, the rest ordinary or refused", created, ordinary, refused)
	}
	if live, _, _, _ := srv.tasks().stats(); live != 300 {
		t.Errorf("%d tasks kept, want 300", live)
	}
	listed := 0
	for _, c := range owners {
		cursor := ""
		for page := 0; ; page++ {
			params := ""
			if cursor != "" {
				params = `,"params":{"cursor":"` + cursor + `"}`
			}
			var resp struct {
				Result struct {
					Tasks      []jsontext.Value `json:"tasks"`
					NextCursor string           `json:"nextCursor"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(c.call(`{"jsonrpc":"2.0","id":2,"method":"tasks/list"`+params+`}`)), &resp, json.RejectUnknownMembers(false)); err != nil {
				t.Fatal(err)
			}
			listed += len(resp.Result.Tasks)
			if cursor = resp.Result.NextCursor; cursor == "" || page > 10 {
				break
			}
		}
	}
	if listed != 300 {
		t.Errorf("the owners list %d tasks, want 300", listed)
	}
}

// An owner's tasks are its own: another owner cannot see, fetch, follow
// or cancel them, and is told what it would be told of a task that does
// not exist; the same owner finds them from another session.
func TestATaskIsItsOwnersOnly(t *testing.T) {
	srv := taskServer()
	alice := Principal{Kind: PrincipalToken, ID: "alice"}
	a := newTaskClient(t, srv, alice, Version20251125)
	created, err := answer(t, a.call(legacyCall(1, "t_job", `{"s":0}`)))
	if err != nil || created.TaskID == "" {
		t.Fatalf("no task: %+v %v", created, err)
	}
	id := created.TaskID
	bob := newTaskClient(t, srv, Principal{Kind: PrincipalToken, ID: "bob"}, Version20251125)
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		_, err := answer(t, bob.call(legacyReq(2, method, id)))
		_, none := answer(t, bob.call(legacyReq(3, method, "nosuch")))
		if err == nil || err.Code != CodeInvalidParams || strings.ReplaceAll(err.Message, id, "X") != strings.ReplaceAll(none.Message, "nosuch", "X") {
			t.Errorf("%s of another's task: %+v, want what an unknown task gets: %+v", method, err, none)
		}
	}
	if list := bob.call(`{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`); strings.Contains(list, id) {
		t.Errorf("tasks/list shows another's task: %s", list)
	}
	bobModern := newTaskClient(t, srv, Principal{Kind: PrincipalToken, ID: "bob"}, ModernVersion)
	listen := bobModern.start(modernTaskReq(5, "subscriptions/listen", `"notifications":{"taskIds":["`+id+`"]}`))
	if ack := <-listen.sent; strings.Contains(ack, id) || !strings.Contains(ack, "acknowledged") {
		t.Errorf("a stream follows another's task: %s", ack)
	}
	if _, err := answer(t, bobModern.call(modernTaskReq(6, "tasks/get", `"taskId":"`+id+`"`))); err == nil || err.Code != CodeInvalidParams {
		t.Errorf("2026-07-28 tasks/get of another's task: %v", err)
	}
	// Alice again, from another session.
	again := newTaskClient(t, srv, alice, Version20251125)
	got, err := answer(t, again.call(legacyReq(6, "tasks/result", id)))
	if err != nil || len(got.Content) != 1 {
		t.Errorf("the owner cannot fetch its task from another session: %+v %v", got, err)
	}
}

// A task ends in exactly one terminal status, whichever was decided
// first, when tasks/cancel races its call's end; its status never changes
// after, one end is recorded, and the result's bytes are kept only when
// it completed, released at its end otherwise: 1,000 times.
func TestCancelRacesCompletion(t *testing.T) {
	srv := taskServer()
	var created, ended atomic.Int64
	srv.TaskRecorded = func(ev TaskEvent) {
		if ev.Ended {
			ended.Add(1)
		} else {
			created.Add(1)
		}
	}
	ts := srv.tasks()
	result := TextResult(strings.Repeat("r", 1000), false)
	outcomes := map[string]int{}
	for i := range 1000 {
		tk, err := ts.reserve(Principal{Kind: PrincipalProcess}, "t_job", 0)
		if err != nil {
			t.Fatal(err)
		}
		call := &Call{srv: srv, version: Version20251125, tk: &callTask{}}
		var cancelled atomic.Int32
		pk := &parked{call: call, hold: srv.total().newHold(), cancel: func() { cancelled.Add(1) }}
		if err := pk.hold.Grow(t.Context(), 500); err != nil { // what the call read
			t.Fatal(err)
		}
		tk.call, tk.pk = call, pk
		call.tk.task = tk
		ts.publish(tk)
		switch i % 10 {
		case 0: // the cancel first, for sure
			tk.cancel()
			tk.finish(result, nil)
		case 1: // the end first, for sure
			tk.finish(result, nil)
			tk.cancel()
		default: // a race
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); tk.cancel() }()
			go func() {
				defer wg.Done()
				if rand.IntN(2) == 0 {
					time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
				}
				tk.finish(result, nil)
			}()
			wg.Wait()
		}
		st := tk.state()
		outcomes[st.status]++
		if want := [2]string{taskCancelled, taskCompleted}; i%10 < 2 && st.status != want[i%10] {
			t.Fatalf("run %d: %s, want %s: the first to decide decides", i, st.status, want[i%10])
		}
		switch st.status {
		case taskCancelled:
			if st.result != nil || cancelled.Load() != 1 {
				t.Fatalf("run %d: cancelled with a result, or its call cancelled %d times", i, cancelled.Load())
			}
		case taskCompleted:
			if st.result == nil || cancelled.Load() != 0 {
				t.Fatalf("run %d: completed without its result, or its call cancelled", i)
			}
		default:
			t.Fatalf("run %d: status %q", i, st.status)
		}
		if tk.cancel() || tk.end(taskFailed, nil, ErrInternal, "") {
			t.Fatalf("run %d: a task that ended ended again", i)
		}
		if again := tk.state(); again.status != st.status {
			t.Fatalf("run %d: %s, then %s", i, st.status, again.status)
		}
		ts.expire(tk)
	}
	if created.Load() != 1000 || ended.Load() != 1000 {
		t.Errorf("recorded %d creations and %d ends", created.Load(), ended.Load())
	}
	if _, bytes, _, _ := ts.stats(); bytes != 0 || srv.total().inUse() != 0 {
		t.Errorf("after every task expired: %d bytes kept, %d counted", bytes, srv.total().inUse())
	}
	if outcomes[taskCancelled] < 100 || outcomes[taskCompleted] < 100 {
		t.Errorf("outcomes %v: want each at least 100 times (one in ten is decided in order)", outcomes)
	}
	t.Logf("outcomes: %v", outcomes)
}

// A task's result is kept as its encoded bytes, counted against the
// server's budget, until the task expires: then the bytes are released,
// and counted as dropped.
func TestAnExpiredTaskGivesBackItsBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := taskServer()
		srv.MaxTaskTTL, srv.MaxTaskBytes = 10*time.Second, 1<<20
		c := newTaskClient(t, srv, Principal{Kind: PrincipalProcess}, Version20251125)
		created, err := answer(t, c.call(legacyCall(1, "t_big", `{}`)))
		if err != nil || created.TaskID == "" {
			t.Fatalf("no task: %+v %v", created, err)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		live, kept, _, _ := srv.tasks().stats()
		if live != 1 || kept < 64<<10 || srv.total().inUse() < kept {
			t.Fatalf("a completed task: %d kept, %d bytes of results, %d counted", live, kept, srv.total().inUse())
		}
		got, err := answer(t, c.call(legacyReq(2, "tasks/result", created.TaskID)))
		if err != nil || len(got.Content) != 1 || len(got.Content[0].Text) != 64<<10 {
			t.Fatalf("its result: %v", err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		live, bytes, expired, dropped := srv.tasks().stats()
		if live != 0 || bytes != 0 || expired != 1 || dropped != kept || srv.total().inUse() != 0 {
			t.Errorf("after its time to live: %d kept, %d bytes, %d expired with %d bytes (%d were kept), %d counted", live, bytes, expired, dropped, kept, srv.total().inUse())
		}
		if _, err := answer(t, c.call(legacyReq(3, "tasks/result", created.TaskID))); err == nil || err.Code != CodeInvalidParams {
			t.Errorf("an expired task's result: %v, want -32602", err)
		}
	})
}

// confirmingTaskServer serves t_erase, which may run as a task: it asks
// the user first (as the registry does for a destructive tool), then
// works 3 s, long past the time after which a call becomes a task.
func confirmingTaskServer() *Server {
	erase := func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
		a, err := call.Confirm(ctx, Question{Message: "Erase it?"})
		if err != nil {
			return nil, err
		}
		if !a.Allowed {
			return TextResult("not allowed: "+a.Action, true), nil
		}
		if !sleepOr(ctx, 3*time.Second) {
			return TextResult("cancelled", true), nil
		}
		return TextResult("erased", false), nil
	}
	srv := newTestServer(&fakeTools{
		set:   NewToolSet([]Tool{{Name: "t_erase", InputSchema: jsontext.Value(`{"type":"object"}`), Execution: &ToolExecution{TaskSupport: TaskOptional}}}),
		calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){"t_erase": erase},
	})
	srv.TaskAfter = 10 * time.Millisecond
	return srv
}

// A call that asks the user to confirm it becomes a task only once the
// user said yes: the question goes with the tools/call itself, before any
// task exists. A call the user does not allow is never a working task: in
// 2026-07-28 no task at all, in 2025-11-25 one that failed already.
func TestTheConfirmationComesBeforeTheTask(t *testing.T) {
	owner := Principal{Kind: PrincipalToken, ID: "ann"}
	t.Run("2025-11-25", func(t *testing.T) {
		srv := confirmingTaskServer()
		checker := protocoltest.NewChecker(Version20251125)
		ss := srv.NewSession(newWire(t, checker), SessionOptions{Transport: "test", TaskOwner: owner})
		t.Cleanup(ss.Close)
		c := &taskClient{t: t, ss: ss, out: newWire(t, checker), checker: checker}
		c.call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"elicitation":{"create":{}}}},"elicitation":{"form":{}}},"clientInfo":{"name":"test","version":"0"}}}`)
		for _, yes := range []bool{true, false} {
			before := len(srv.LiveTasks())
			w := c.start(legacyCall(1, "t_erase", `{}`))
			var question string
			select {
			case question = <-w.sent:
			case resp := <-w.final:
				t.Fatalf("answered before the user was asked: %s", resp)
			case <-time.After(10 * time.Second):
				t.Fatal("no question within 10 s")
			}
			id, method := serverRequest(t, question)
			if method != "elicitation/create" || strings.Contains(question, "related-task") || !strings.Contains(question, "Erase it?") {
				t.Fatalf("the question: %s", question)
			}
			time.Sleep(100 * time.Millisecond) // ten times the time after which a call becomes a task
			if live := srv.LiveTasks(); len(live) != before {
				t.Fatalf("a task exists before the user answered: %+v", live)
			}
			c.start(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"confirm":%v}}}`, id, yes)) // a response: none comes back
			r, err := answer(t, <-w.final)
			switch {
			case err != nil:
				t.Fatalf("yes %v: %+v", yes, err)
			case yes && (r.TaskID == "" || r.Status != "working"):
				t.Errorf("after a yes: %+v; want a task, working", r)
			case !yes && (r.TaskID == "" || r.Status != "failed" || r.StatusMessage != "not allowed: accept"):
				// 2025-11-25 promises a task when one is asked for: a call
				// that ends before it is one is a task ended already.
				t.Errorf("after a no: %+v; want a task failed already, with the refusal", r)
			}
		}
	})
	t.Run("2026-07-28", func(t *testing.T) {
		srv := confirmingTaskServer()
		c := newTaskClient(t, srv, owner, ModernVersion)
		call := func(id int, extra string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_erase","arguments":{}%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{"form":{}}}}}}`, id, extra)
		}
		for i, yes := range []bool{true, false} {
			before := len(srv.LiveTasks())
			msg, state := inputRequired(t, c.call(call(10*i+1, "")))
			if msg != "Erase it?" {
				t.Errorf("asked %q", msg)
			}
			if live := srv.LiveTasks(); len(live) != before {
				t.Fatalf("a task exists before the user answered: %+v", live)
			}
			r, err := answer(t, c.call(call(10*i+2, answered(yes)+`,"requestState":"`+state+`"`)))
			switch {
			case err != nil:
				t.Fatalf("yes %v: %+v", yes, err)
			case yes && (r.ResultType != "task" || r.TaskID == ""):
				t.Errorf("after a yes: %+v; want a task", r)
			case !yes && (r.ResultType != "complete" || r.TaskID != "" || len(r.Content) != 1 || r.Content[0].Text != "not allowed: accept"):
				t.Errorf("after a no: %+v; want the refusal, complete, no task", r)
			}
		}
		if live := srv.LiveTasks(); len(live) != 1 {
			t.Errorf("%d tasks, want the one allowed", len(live))
		}
	})
}
