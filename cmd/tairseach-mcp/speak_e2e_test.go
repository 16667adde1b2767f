//go:build unix

package main

// End-to-end tests of a backend that speaks during a call, and of one
// that abuses it: the built binary, the Go SDK client, and a fake backend
// that sends what a real one might.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// speakManifest has a tool per way of speaking, and a plain echo.
const speakManifest = `{"id":"s","tools":[
 {"name":"s.flood","description":"Floods progress.","inputSchema":{"type":"object"}},
 {"name":"s.ask","description":"Asks questions.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}},
 {"name":"s.late","description":"Asks late.","inputSchema":{"type":"object"}},
 {"name":"s.hasty","description":"Asks, then replies at once.","inputSchema":{"type":"object"}},
 {"name":"s.backwards","description":"Reports progress that goes back.","inputSchema":{"type":"object"}},
 {"name":"s.echo","description":"Echoes.","inputSchema":{"type":"object"}}
],"implementation":{"methods":{"s.flood":"flood","s.ask":"ask","s.late":"late","s.hasty":"hasty","s.backwards":"backwards","s.echo":"echo"}}}`

// speakingBackend answers the methods of speakManifest. late says on
// lateStarted that it runs, and reports on lateDone what its question
// got.
func speakingBackend(t *testing.T, lateStarted chan<- struct{}, lateDone chan<- error) *sockettest.Server {
	t.Helper()
	return sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		p := req.Peer
		switch req.Method {
		case "flood":
			for i := 1; i <= 100_000; i++ {
				if err := p.Notify("notifications/progress", map[string]any{"progress": i, "total": 100_000}); err != nil {
					return nil, err
				}
			}
			return map[string]int{"sent": 100_000}, nil
		case "backwards":
			for _, v := range []int{5, 3, 4, 6} {
				if err := p.Notify("notifications/progress", map[string]any{"progress": v, "total": 10}); err != nil {
					return nil, err
				}
			}
			return map[string]bool{"done": true}, nil
		case "ask":
			var n struct{ N int }
			_ = json.Unmarshal(req.Params, &n)
			for i := range n.N {
				if _, err := p.Call(ctx, fmt.Sprintf("q%d", i), "elicitation/create", map[string]any{
					"message": fmt.Sprintf("Question %d?", i), "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]string{"type": "boolean"}}}}); err != nil {
					return nil, fmt.Errorf("question %d: %w", i, err)
				}
			}
			return map[string]int{"answered": n.N}, nil
		case "late":
			lateStarted <- struct{}{}
			<-ctx.Done() // the client cancels, and the bridge hangs up
			time.Sleep(100 * time.Millisecond)
			qctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := p.Call(qctx, "late", "elicitation/create", map[string]any{"message": "Still there?", "requestedSchema": map[string]any{"type": "object"}})
			lateDone <- err
			return nil, err
		case "hasty": // asks, then replies without waiting for the answer, after pause_ms
			var a struct {
				PauseMS int `json:"pause_ms"`
			}
			_ = json.Unmarshal(req.Params, &a)
			p.Send(`{"jsonrpc":"2.0","id":"never-mind","method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object"}}}`)
			time.Sleep(time.Duration(a.PauseMS) * time.Millisecond)
			return map[string]bool{"done": true}, nil
		}
		return sockettest.Echo(ctx, req)
	})
}

// A backend that floods the client with progress holds up no other call:
// the client gets increasing progress, coalesced while it reads, and
// another call of the same session is answered at once meanwhile.
func TestABackendThatFloodsProgressHoldsUpNoOne(t *testing.T) {
	t.Parallel()
	be := speakingBackend(t, nil, nil)
	dir := manifestDir(t, map[string]string{"s.json": speakManifest})
	var mu sync.Mutex
	var last float64
	var got, backwards int
	cs := connectSDKWith(t, bridgeCmd(dir, be.Path), "2025-11-25", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got++
			if req.Params.Progress <= last {
				backwards++
			}
			last = req.Params.Progress
		},
	})
	flooded := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "tairseach_s_flood", Arguments: map[string]any{}}
		params.SetProgressToken("flood")
		res, err := cs.CallTool(t.Context(), params)
		if err == nil && res.IsError {
			err = errors.New(textOf(res))
		}
		flooded <- err
	}()
	var worst time.Duration
	for range 20 {
		start := time.Now()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_s_echo", Arguments: map[string]any{"x": 1}})
		if err != nil || res.IsError {
			t.Fatalf("an echo during the flood: %v %q", err, textOf(res))
		}
		worst = max(worst, time.Since(start))
	}
	if err := <-flooded; err != nil {
		t.Fatalf("the flooding call: %v", err)
	}
	// The bridge writes the last notification before the response, but the
	// SDK hands notifications to their handler on a queue of its own, which
	// a loaded machine (under -race) can leave seconds behind the response.
	answered := time.Now()
	for deadline := answered.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		done := last == 100_000
		mu.Unlock()
		if done {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("100,000 progress notifications: the client got %d, its handler the last %v after the response; the slowest echo meanwhile took %v", got, time.Since(answered).Round(time.Millisecond), worst)
	if got == 0 || backwards > 0 || last != 100_000 {
		t.Errorf("progress: %d received, %d not increasing, the last %v; want increasing progress ending at 100000", got, backwards, last)
	}
	if worst > 3*time.Second {
		t.Errorf("an echo took %v during the flood", worst)
	}
}

// Progress that does not increase is not sent, and counted in the call's
// audit entry.
func TestProgressNotSentIsCounted(t *testing.T) {
	t.Parallel()
	be := speakingBackend(t, nil, nil)
	dir := manifestDir(t, map[string]string{"s.json": speakManifest})
	log := filepath.Join(t.TempDir(), "audit.log")
	var mu sync.Mutex
	var got []float64
	cs := connectSDKWith(t, bridgeCmd(dir, be.Path, "--audit-log", log), "2025-11-25", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, req.Params.Progress)
		},
	})
	params := &mcp.CallToolParams{Name: "tairseach_s_backwards", Arguments: map[string]any{}}
	params.SetProgressToken("back")
	if res, err := cs.CallTool(t.Context(), params); err != nil || res.IsError {
		t.Fatalf("%v %q", err, textOf(res))
	}
	cs.Close() // the bridge exits, its audit log written
	var calls []audit.Entry
	for _, e := range auditEntries(t, log) {
		if e.Name == "tairseach_s_backwards" {
			calls = append(calls, e)
		}
	}
	if len(calls) != 1 || calls[0].NotificationsDropped != 2 {
		t.Errorf("audit entries %+v; want one, with notifications_dropped 2 (3 and 4 after 5)", calls)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[len(got)-1] != 6 || slices.Contains(got, 3) || slices.Contains(got, 4) {
		t.Errorf("the client got progress %v; want 5 and 6 (or 6 alone, coalesced)", got)
	}
}

// A backend that asks a thousand questions, one after the other, gets a
// thousand answers from the client.
func TestABackendAsksAThousandQuestions(t *testing.T) {
	t.Parallel()
	be := speakingBackend(t, nil, nil)
	dir := manifestDir(t, map[string]string{"s.json": speakManifest})
	var asked atomic.Int32
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		asked.Store(0)
		cs := connectSDKWith(t, bridgeCmd(dir, be.Path), version, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			},
		})
		n := 1000
		if version == "2026-07-28" {
			n = 8 // a round trip of the whole call each: the Go SDK retries a call at most 10 times (see below for 1,000)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_s_ask", Arguments: map[string]any{"n": n}})
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		if res.IsError || !strings.Contains(textOf(res), fmt.Sprintf(`"answered":%d`, n)) || int(asked.Load()) != n {
			t.Errorf("%s: %v %q, %d asked; want %d answered", version, err, textOf(res), asked.Load(), n)
		}
		cs.Close()
	}
}

// In 2026-07-28 each of a thousand questions is a round of the whole
// call: an input_required result, and the client's retry with the answer
// and the requestState, while the bridge keeps the backend's call open.
// Every line is checked against the schema.
func TestABackendAsksAThousandQuestionsInTheResult(t *testing.T) {
	t.Parallel()
	be := speakingBackend(t, nil, nil)
	dir := manifestDir(t, map[string]string{"s.json": speakManifest})
	cv := &conversation{t: t, lb: startLive(t, bridgeCmd(dir, be.Path)), checker: protocoltest.NewChecker("2026-07-28")}
	const n = 1000
	call := func(id int, extra string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_s_ask","arguments":{"n":%d}%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`, id, n, extra)
	}
	cv.send(call(1, ""))
	rounds := 0
	for id := 1; ; {
		var r struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		res := cv.reply(strconv.Itoa(id))["result"]
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatalf("round %d: %v: %s", rounds, err, res)
		}
		if r.ResultType != "input_required" {
			if !strings.Contains(string(res), fmt.Sprintf(`\"answered\":%d`, n)) || strings.Contains(string(res), `"isError":true`) {
				t.Fatalf("after %d rounds: %s", rounds, res)
			}
			break
		}
		if len(r.InputRequests) != 1 || r.RequestState == "" {
			t.Fatalf("round %d: %s", rounds, res)
		}
		var name string
		for name = range r.InputRequests {
		}
		if want := fmt.Sprintf("q%d", rounds); name != want {
			t.Fatalf("round %d asks %q, want %q", rounds, name, want)
		}
		rounds++
		id++
		cv.send(call(id, fmt.Sprintf(`,"inputResponses":{%q:{"action":"accept","content":{"ok":true}}},"requestState":%q`, name, r.RequestState)))
	}
	if rounds != n {
		t.Errorf("%d rounds, want %d", rounds, n)
	}
}

// A backend that asks after its call was cancelled gets no answer and no
// hang: its connection is gone, or its question refused as cancelled; the
// bridge serves the next call.
func TestABackendThatAsksAfterTheCallWasCancelled(t *testing.T) {
	t.Parallel()
	lateStarted, lateDone := make(chan struct{}, 1), make(chan error, 1)
	be := speakingBackend(t, lateStarted, lateDone)
	dir := manifestDir(t, map[string]string{"s.json": speakManifest})
	cs := connectSDKWith(t, bridgeCmd(dir, be.Path), "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a question of a cancelled call reached the client")
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { // cancels the call once the backend runs it
		<-lateStarted
		cancel()
	}()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_s_late", Arguments: map[string]any{}}); err == nil {
		t.Fatal("the cancelled call was answered")
	}
	select {
	case err := <-lateDone:
		var e *sockettest.Error
		t.Logf("the late question got: %v", err)
		if !errors.Is(err, sockettest.ErrGone) && !(errors.As(err, &e) && e.Code == -32000) {
			t.Errorf("the late question got %v, want the connection gone or -32000", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the late question hung; backend connections open: %d", be.MaxConns())
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_s_echo", Arguments: map[string]any{"after": true}}); err != nil || res.IsError {
		t.Errorf("the next call: %v %q", err, textOf(res))
	}
}

// A backend that asks and replies without waiting has its question
// withdrawn: the client is told, the reply is the result, and the
// connection serves the next call.
func TestABackendThatRepliesWithoutWaiting(t *testing.T) {
	t.Parallel()
	be := speakingBackend(t, nil, nil)
	dir := manifestDir(t, map[string]string{"s.json": speakManifest})
	asked := make(chan struct{}, 1)
	withdrawn := make(chan bool, 1)
	cs := connectSDKWith(t, bridgeCmd(dir, be.Path, "--pool-size", "1"), "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			select {
			case <-ctx.Done():
				withdrawn <- true
			case <-time.After(20 * time.Second):
				withdrawn <- false
			}
			return nil, ctx.Err()
		},
	})
	// At once, the reply may come before the bridge asks: then the client
	// is never asked. After a pause, the client is asked, and the question
	// withdrawn (notifications/cancelled) when the reply comes.
	for _, pause := range []int{0, 300} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_s_hasty", Arguments: map[string]any{"pause_ms": pause}})
		if err != nil || res.IsError || !strings.Contains(textOf(res), `"done":true`) {
			t.Fatalf("the hasty call (pause %d ms): %v %q", pause, err, textOf(res))
		}
		for range 3 {
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_s_echo", Arguments: map[string]any{"next": 1}}); err != nil || res.IsError || !strings.Contains(textOf(res), `"next":1`) {
				t.Fatalf("the next call on the one connection: %v %q", err, textOf(res))
			}
		}
		select {
		case <-asked:
			if !<-withdrawn {
				t.Errorf("pause %d ms: the client was asked, and the question was not withdrawn within 20 s of the reply", pause)
			}
		case <-time.After(time.Second):
			if pause > 0 {
				t.Errorf("pause %d ms: the client was never asked", pause)
			}
		}
	}
}
