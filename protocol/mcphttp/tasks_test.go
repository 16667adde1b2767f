package mcphttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
)

// The tasks of a request are owned by the bearer token's holder; without
// a token, on loopback or the Unix socket, by the local user, whom every
// request names the same; otherwise by the request's own principal.
func TestATaskIsOwnedByWhoOutlivesTheConnection(t *testing.T) {
	session := protocol.Principal{}
	token := protocol.Principal{Kind: protocol.PrincipalToken, ID: "3f9a0c1d2e4b5a6f"}
	conn := protocol.Principal{Kind: protocol.PrincipalConnection, ID: "192.0.2.7:5123"}
	local := protocol.Principal{Kind: protocol.PrincipalLocal}
	for _, tt := range []struct {
		name     string
		local    net.Addr
		who      protocol.Principal
		hasToken bool
		want     protocol.Principal
	}{
		{"a token on loopback", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8411}, token, true, token},
		{"a token off loopback", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8411}, token, true, token},
		{"no token on loopback, a modern request", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8411}, conn, false, local},
		{"no token on IPv6 loopback, a session", &net.TCPAddr{IP: net.IPv6loopback, Port: 8411}, session, false, local},
		{"no token on the Unix socket", &net.UnixAddr{Name: "/run/user/1000/mcp.sock", Net: "unix"}, conn, false, local},
		{"no token off loopback", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8411}, conn, false, conn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, Path, nil)
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tt.local))
			if got := taskOwner(r, tt.who, tt.hasToken); got != tt.want {
				t.Errorf("owner %v, want %v", got, tt.want)
			}
		})
	}
}

const tasksMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

func modernTask(id int, method, params string) string {
	return request(id, method, "{"+params+","+tasksMeta+"}")
}

// taskOf reads the task of a JSON reply: a CreateTaskResult of either
// generation, or a tasks/get result.
func taskOf(t *testing.T, r *reply) (id, status string, result jsontext.Value) {
	t.Helper()
	var resp struct {
		Result struct {
			Task *struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			} `json:"task"`
			TaskID string         `json:"taskId"`
			Status string         `json:"status"`
			Result jsontext.Value `json:"result"`
		} `json:"result"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &resp, json.RejectUnknownMembers(false)) != nil {
		t.Fatalf("not a task: %d %s", r.status, r.body)
	}
	if tk := resp.Result.Task; tk != nil {
		return tk.TaskID, tk.Status, nil
	}
	return resp.Result.TaskID, resp.Result.Status, resp.Result.Result
}

// A task outlives the connection and the session that created it: its
// owner, the local user here, finds its status and its result on another
// connection (2026-07-28) or in another session (2025-11-25).
func TestATasksResultIsFetchedAfterItsConnectionClosed(t *testing.T) {
	b := newBridge(t, Options{}, func(srv *protocol.Server) { srv.TaskAfter = 10 * time.Millisecond })

	// 2026-07-28: created on one connection, fetched on another.
	created := taskID(t, b.modern(t).post(modernTask(1, "tools/call", `"name":"job","arguments":{}`)))
	waitFor(t, b.tools.started, "the task's call")
	b.ts.CloseClientConnections()
	waitFor(t, b.closed, "the creating connection to close")
	b.hc.CloseIdleConnections() // the client's pool forgets it

	// Followed from another connection.
	fresh := b.modern(t)
	listen := fresh.open(http.MethodPost, modernTask(3, "subscriptions/listen", `"notifications":{"taskIds":["`+created+`"]}`))
	if ack := listen.next(); !strings.Contains(ack, created) {
		t.Fatalf("the stream does not follow the task: %s", ack)
	}

	// 2025-11-25: created in a session that then ends.
	old := b.legacy(t, protocol.Version20251125)
	legacyID := taskID(t, old.post(request(2, "tools/call", `{"name":"job","arguments":{},"task":{"ttl":60000}}`)))
	waitFor(t, b.tools.started, "the second task's call")
	if r := old.do(http.MethodDelete, ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	b.tools.open()

	if ev := listen.next(); !strings.Contains(ev, `"notifications/tasks"`) || !strings.Contains(ev, `"completed"`) {
		t.Errorf("the stream announces %s", ev)
	}
	r := fresh.post(modernTask(4, "tasks/get", `"taskId":"`+created+`"`))
	if _, status, result := taskOf(t, r); status != "completed" || !strings.Contains(string(result), "released") {
		t.Errorf("the task, from another connection: %s", r.body)
	}
	again := b.legacy(t, protocol.Version20251125)
	r = again.post(request(5, "tasks/result", `{"taskId":"`+legacyID+`"}`))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "released") || !strings.Contains(string(r.body), legacyID) {
		t.Errorf("the task's result, from another session: %d %s", r.status, r.body)
	}
}

func taskID(t *testing.T, r *reply) string {
	t.Helper()
	id, status, _ := taskOf(t, r)
	if id == "" || status != "working" {
		t.Fatalf("no task created: %s", r.body)
	}
	return id
}

// A 2026-07-28 tasks/get, tasks/update or tasks/cancel names its task in
// Mcp-Name, checked against params.taskId: missing or different is
// -32020 and 400.
func TestMcpNameNamesTheTask(t *testing.T) {
	b := newBridge(t, Options{}, nil)
	c := b.modern(t)
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		params := `"taskId":"t1"`
		if method == "tasks/update" {
			params += `,"inputResponses":{}`
		}
		body := modernTask(1, method, params)
		if r := c.post(body); r.status != http.StatusOK || r.errorCode() != protocol.CodeInvalidParams {
			t.Errorf("%s with Mcp-Name t1: %d %s, want 200 and -32602 (no such task)", method, r.status, r.body)
		}
		for _, name := range []string{"t2", ""} {
			r := c.post(body, headers{"Mcp-Name": name})
			if r.status != http.StatusBadRequest || r.errorCode() != protocol.CodeHeaderMismatch {
				t.Errorf("%s with Mcp-Name %q: %d %s, want 400 and -32020", method, name, r.status, r.body)
			}
		}
	}
}

// askingTask starts a 2025-11-25 session that can be asked, on a bridge
// of its own, and in it a task that asks a question while no GET stream
// is open; it returns once the task waits for the answer (input_required).
func askingTask(t *testing.T, ttl int) (c *client, id string) {
	t.Helper()
	b := newBridge(t, Options{}, func(srv *protocol.Server) { srv.TaskAfter = 10 * time.Millisecond })
	c = &client{b: b, t: t, hc: b.hc, check: protocoltest.NewChecker(protocol.Version20251125)}
	r := c.post(request(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"0"}}`))
	c.session, c.version = r.header.Get("Mcp-Session-Id"), protocol.Version20251125
	if r := c.post(notification("notifications/initialized", "")); r.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", r.status, r.body)
	}
	id = taskID(t, c.post(request(2, "tools/call", fmt.Sprintf(`{"name":"askjob","arguments":{},"task":{"ttl":%d}}`, ttl))))
	waitFor(t, b.tools.started, "the task's call")
	b.tools.open()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, status, _ := taskOf(t, c.post(request(3, "tasks/get", `{"taskId":"`+id+`"}`))); status == "input_required" {
			return c, id
		}
		if time.Now().After(deadline) {
			t.Fatal("the task never asked")
		}
	}
}

// answerQuestion reads s until the task's question comes, within 10 s,
// and answers it with the name Ann.
func answerQuestion(t *testing.T, c *client, s *eventStream) {
	t.Helper()
	defer time.AfterFunc(10*time.Second, s.stop).Stop() // a question that never comes ends the stream
	var question struct {
		ID     jsontext.Value `json:"id"`
		Method string         `json:"method"`
	}
	for question.Method != "elicitation/create" {
		if err := json.Unmarshal([]byte(s.next()), &question, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
	}
	if r := c.post(`{"jsonrpc":"2.0","id":` + string(question.ID) + `,"result":{"action":"accept","content":{"name":"Ann"}}}`); r.status != http.StatusAccepted {
		t.Fatalf("the answer: %d %s", r.status, r.body)
	}
}

// A 2025-11-25 task's question for a session with no GET stream open
// waits for the next one, instead of being dropped as a notification is:
// its asker waits for the answer.
func TestATasksQuestionWaitsForAGETStream(t *testing.T) {
	c, id := askingTask(t, 60000)
	answerQuestion(t, c, c.open(http.MethodGet, ""))
	r := c.post(request(4, "tasks/result", `{"taskId":"`+id+`"}`))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `Ann`) {
		t.Errorf("the task's result: %d %s", r.status, r.body)
	}
}

// A 2025-11-25 task's question that waits for a GET stream goes instead
// to a tasks/result that waits for the task, on its stream: the client
// waits there, with no GET stream open.
func TestATasksWaitingQuestionGoesToTasksResult(t *testing.T) {
	// Without the question, the request would wait until the task expires
	// (15 s), and be answered then, not as an event stream.
	c, id := askingTask(t, 15000)
	result := c.open(http.MethodPost, request(4, "tasks/result", `{"taskId":"`+id+`"}`))
	answerQuestion(t, c, result)
	if got := strings.Join(result.end(), "\n"); !strings.Contains(got, "Ann") || !strings.Contains(got, `"id":4`) {
		t.Errorf("the tasks/result stream after the answer:\n%s", got)
	}
}
