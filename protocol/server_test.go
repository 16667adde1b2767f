package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func serverInfo(version string) string {
	if version >= Version20250618 {
		return `{"name":"tairseach-mcp","title":"Tairseach","version":"1.2.3"}`
	}
	return `{"name":"tairseach-mcp","version":"1.2.3"}`
}

func TestInitializeNegotiatesTheVersion(t *testing.T) {
	tests := []struct{ requested, answered string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", "2025-11-25"}, // initialize is legacy: a modern version gets the newest legacy one
		{"2099-01-01", "2025-11-25"},
		{"1.0", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run("requested "+tt.requested, func(t *testing.T) {
			c := startClient(t, newTestServer(nil), tt.answered)
			c.send(initLine(1, tt.requested))
			c.expect(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + tt.answered + `","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":` + serverInfo(tt.answered) + `}}`)
			if err := c.close(); err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

func TestInitializeSendsInstructions(t *testing.T) {
	srv := newTestServer(nil)
	srv.Instructions = "Use the notes tools for notes."
	srv.ListChanged = false
	c := startClient(t, srv, Version20251125)
	c.send(initLine(1, Version20251125))
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{}},"serverInfo":` + serverInfo(Version20251125) + `,"instructions":"Use the notes tools for notes."}}`)
	c.close()
}

func TestResultsAreShapedForTheVersion(t *testing.T) {
	const (
		echoBase   = `"name":"t_echo","description":"Echoes.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}`
		plain      = `{"name":"t_plain","description":"Plain.","inputSchema":{"type":"object"}}`
		annotation = `,"annotations":{"readOnlyHint":true}`
		structured = `,"title":"Echo","outputSchema":{"type":"object"}`
	)
	tests := []struct {
		version, tool, call string
	}{
		{Version20241105, `{` + echoBase + `}`, `{"content":[{"type":"text","text":"{\"x\":\"hi\"}"}]}`},
		{Version20250326, `{` + echoBase + annotation + `}`, `{"content":[{"type":"text","text":"{\"x\":\"hi\"}"}]}`},
		{Version20250618, `{` + echoBase + structured + annotation + `}`, `{"content":[{"type":"text","text":"{\"x\":\"hi\"}"}],"structuredContent":{"x":"hi"}}`},
		{Version20251125, `{` + echoBase + structured + annotation + `}`, `{"content":[{"type":"text","text":"{\"x\":\"hi\"}"}],"structuredContent":{"x":"hi"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			c := startClient(t, newTestServer(nil), tt.version)
			c.send(initLine(1, tt.version))
			c.recv()
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			c.expect(`{"jsonrpc":"2.0","id":2,"result":{"tools":[` + tt.tool + `,` + plain + `]}}`)
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_echo","arguments":{"x":"hi"}}}`)
			c.expect(`{"jsonrpc":"2.0","id":3,"result":` + tt.call + `}`)
			c.close()
		})
	}
}

func TestRequestsAndErrors(t *testing.T) {
	tests := []struct {
		name string
		send string
		want string // "" means no response
	}{
		{"requests before initialize are served", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
		{"ping answers an empty result", `{"jsonrpc":"2.0","id":"p-1","method":"ping"}`, `{"jsonrpc":"2.0","id":"p-1","result":{}}`},
		{"a string id is echoed exactly", `{"jsonrpc":"2.0","id":"ab\u00e9\"c","method":"ping"}`, `{"jsonrpc":"2.0","id":"ab\u00e9\"c","result":{}}`},
		{"a big numeric id is echoed exactly", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, `{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}`},
		{"a negative id is echoed", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, `{"jsonrpc":"2.0","id":-7,"result":{}}`},
		{"notifications get no response", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{"unknown notifications get no response", `{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`, ""},
		{"client responses get no response", `{"jsonrpc":"2.0","id":5,"result":{}}`, ""},
		{"unparseable JSON gets -32700 with id null", `{"jsonrpc":"2.0","id":1,"method":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"unexpected end of JSON input at offset 33"}}`},
		{"a wrong jsonrpc version gets -32600", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"jsonrpc\" must be \"2.0\""}}`},
		{"a missing method gets -32600", `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"method\" is missing"}}`},
		{"an object id gets -32600 with id null", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or an integer"}}`},
		{"a fractional id gets -32600 with id null", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id must be a string or an integer"}}`},
		{"array params get -32600", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}`},
		{"a bare number gets -32600", `42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a message must be a JSON object"}}`},
		{"an unknown method gets -32601", `{"jsonrpc":"2.0","id":1,"method":"tools/frobnicate"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no method \"tools/frobnicate\""}}`},
		{"a notification with array params gets no response", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`, ""},
		{"a string id in invalid UTF-8 gets -32600 with id null", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id is not valid UTF-8"}}`},
		{"resources/list is empty", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, `{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`},
		{"resources/templates/list is empty", `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`, `{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[]}}`},
		{"prompts/list is empty", `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`, `{"jsonrpc":"2.0","id":1,"result":{"prompts":[]}}`},
		{"resources/read is not found", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"resource not found: this server offers no resources","data":{"uri":"file:///x"}}}`},
		{"prompts/get is invalid params", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt \"p\": this server offers no prompts"}}`},
		{"tools/call of an unknown tool is -32602", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params"}}`},
		{"tools/call without a name is -32602", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"tools/call: \"name\" is required"}}`},
		{"tools/call with array arguments is -32602", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":[1]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"tools/call: \"arguments\" must be an object"}}`},
		{"tools/call with wrongly typed params is -32602", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"tools/call: \"name\" must be a string, not number"}}`},
		{"tools/call without arguments passes none", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain"}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}}`},
		{"logging/setLevel with a bad level is -32602", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level \"loud\" (want one of debug, info, notice, warning, error, critical, alert, emergency)"}}`},
		{"logging/setLevel answers an empty result", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"a batch outside 2025-03-26 is refused whole", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported in protocol version 2025-11-25 (only in 2025-03-26)"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startClient(t, newTestServer(nil), Version20251125)
			c.send(tt.send)
			if tt.want == "" {
				// A ping after it proves the server moved on without answering.
				c.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
				line := c.recv()
				if strings.Contains(tt.send, `"tools/list"`) {
					if !strings.Contains(line, `"tools":[`) {
						t.Fatalf("tools/list before initialize: %s", line)
					}
					line = c.recv()
				}
				if d := jsonDiff(`{"jsonrpc":"2.0","id":"after","result":{}}`, line); d != "" {
					t.Errorf("expected only the ping's response, got %s", line)
				}
			} else {
				c.expect(tt.want)
			}
			if err := c.close(); err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

func TestBatchesIn20250326(t *testing.T) {
	c := startClient(t, newTestServer(nil), Version20250326)
	c.send(initLine(1, Version20250326))
	c.recv()
	c.send(`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"t_plain","arguments":{"k":1}}},{"jsonrpc":"2.0","id":"c"}]`)
	line := c.recv()
	for _, want := range []string{`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":"b","result":{"content":[{"type":"text","text":"{\"k\":1}"}]}}`, `"id":"c","error":{"code":-32600`} {
		if !strings.Contains(line, want) {
			t.Errorf("batch response %s lacks %s", line, want)
		}
	}
	// A tool list is written in parts on its own, and whole in a batch.
	c.send(`{"jsonrpc":"2.0","id":"L","method":"tools/list"}`)
	list := c.recv()
	if !strings.HasPrefix(list, `{"jsonrpc":"2.0","id":"L","result":{"tools":[{"name":"t_echo"`) {
		t.Errorf("tools/list response %s", list)
	}
	c.send(`[{"jsonrpc":"2.0","id":"L","method":"tools/list"}]`)
	c.expect("[" + list + "]")
	c.send(`[]`)
	c.expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}`)
	c.send(`[{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}]`)
	c.expect(`[{"jsonrpc":"2.0","id":"i","error":{"code":-32600,"message":"initialize must not be part of a batch"}}]`)
	c.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	c.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":9,"result":{}}`) // a batch of notifications gets nothing
	c.close()
}

// Cancelling one call of a batch leaves it out of the batch's response;
// the other elements are still answered.
func TestCancellingACallInABatchAnswersTheRest(t *testing.T) {
	started := make(chan string, 1)
	c := startClient(t, newTestServer(blockingTools(started, make(chan struct{}))), Version20250326)
	c.send(initLine(1, Version20250326))
	c.recv()
	c.send(`[{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"t_plain","arguments":{}}},{"jsonrpc":"2.0","id":"p","method":"ping"}]`)
	<-started
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}`)
	c.expect(`[{"jsonrpc":"2.0","id":"p","result":{}}]`)
	// A batch whose only request is cancelled gets no response at all.
	c.send(`[{"jsonrpc":"2.0","id":"slow2","method":"tools/call","params":{"name":"t_plain","arguments":{}}}]`)
	<-started
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow2"}}`)
	c.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":9,"result":{}}`)
	c.close()
}

// blockingTools returns tools whose calls wait until release is closed.
func blockingTools(started chan<- string, release <-chan struct{}) *fakeTools {
	return &fakeTools{set: testTools(), call: func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		started <- string(req.Arguments)
		select {
		case <-release:
			return TextResult("done "+string(req.Arguments), false), nil
		case <-ctx.Done():
			return TextResult("cancelled", true), nil
		}
	}}
}

func TestASlowToolDoesNotBlockOtherRequests(t *testing.T) {
	started, release := make(chan string, 1), make(chan struct{})
	c := startClient(t, newTestServer(blockingTools(started, release)), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{"n":1}}}`)
	<-started
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if line := c.recv(); !strings.Contains(line, `"id":3`) {
		t.Fatalf("want the tools/list response, got %s", line)
	}
	close(release)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done {\"n\":1}"}]}}`)
	c.close()
}

func TestEOFWaitsForCallsInFlight(t *testing.T) {
	started, release := make(chan string, 1), make(chan struct{})
	c := startClient(t, newTestServer(blockingTools(started, release)), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{}}}`)
	<-started
	c.in.Close() // EOF while the call runs
	select {
	case err := <-c.served:
		t.Fatalf("Serve returned (%v) before the call in flight finished", err)
	default:
	}
	close(release)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done {}"}]}}`)
	if err := c.close(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestCancelledCallsGetNoResponse(t *testing.T) {
	started := make(chan string, 1)
	c := startClient(t, newTestServer(blockingTools(started, make(chan struct{}))), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"t_plain","arguments":{}}}`)
	<-started
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"unknown"}}`)
	// The id is free again once the cancelled call has finished; a new
	// request with it gets its own response and the cancelled one none.
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if err := c.close(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestDuplicateIDInFlightIsRefused(t *testing.T) {
	started, release := make(chan string, 2), make(chan struct{})
	c := startClient(t, newTestServer(blockingTools(started, release)), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{}}}`)
	<-started
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{}}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"a request with this id is already in flight"}}`)
	close(release)
	c.recv()
	c.close()
}

func TestOverlongLinesGetAnErrorAndTheSessionGoesOn(t *testing.T) {
	srv := newTestServer(nil)
	srv.MaxMessageSize = 1000
	c := startClient(t, srv, Version20251125)
	const tooLong = `"error":{"code":-32600,"message":"message longer than 1000 bytes; raise --max-message-size to accept it"}}`
	for _, size := range []int{2000, 200 << 10} { // within and beyond the read buffer
		// The id is answered when it comes before the bulk of the message.
		c.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", size) + `"}}`)
		c.expect(`{"jsonrpc":"2.0","id":1,` + tooLong)
		// At the end of a line longer than the read buffer, it is not seen.
		c.send(`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", size) + `"},"id":1}`)
		if size < 64<<10 {
			c.expect(`{"jsonrpc":"2.0","id":1,` + tooLong)
		} else {
			c.expect(`{"jsonrpc":"2.0","id":null,` + tooLong)
		}
	}
	// The limit is on the message, not counting its newline.
	msg := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"`
	msg += strings.Repeat("x", 1000-len(msg)-3) + `"}}`
	c.send(msg)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	c.send(msg[:len(msg)-2] + `x"}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,` + tooLong)
	c.close()
}

func TestIDFromPrefix(t *testing.T) {
	for prefix, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12,"method"`: `12`,
		`{"id":"a\"b","params":{"x":`:       `"a\"b"`,
		`{"a":{"id":1},"id":"x"`:            `"x"`,
		`{"jsonrpc":"2.0","id":12`:          `null`, // it may be 1234
		`{"id":"ab`:                         `null`,
		`{"params":{"pad":"xxxx`:            `null`,
		`{"id":null,"method"`:               `null`,
		`{"id":1.5,"method"`:                `null`,
		`[{"id":1}`:                         `null`,
		``:                                  `null`,
	} {
		if got := string(idFromPrefix([]byte(prefix))); got != want {
			t.Errorf("idFromPrefix(%s) = %s, want %s", prefix, got, want)
		}
	}
}

func TestLongLinesUpToTheLimitAreServed(t *testing.T) {
	c := startClient(t, newTestServer(nil), Version20251125)
	big := strings.Repeat("y", 3<<20)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{"b":"` + big + `"}}}`)
	if line := c.recv(); !strings.Contains(line, big) {
		t.Fatalf("3 MiB argument not echoed")
	}
	c.close()
}

func TestLoggingNotificationsFollowTheClientsLevel(t *testing.T) {
	srv := newTestServer(nil)
	c := startClient(t, srv, Version20251125)
	c.send(initLine(1, Version20251125))
	c.recv()
	srv.Log(LevelError, "bridge", "before setLevel: not sent")
	c.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	srv.Log(LevelInfo, "bridge", "below the level: not sent")
	srv.Log(LevelWarning, "bridge", "manifest x.json: invalid JSON")
	c.expect(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"bridge","data":"manifest x.json: invalid JSON"}}`)
	c.close()
}

func TestListChangedIsSentAfterInitializeOnly(t *testing.T) {
	srv := newTestServer(nil)
	c := startClient(t, srv, Version20251125)
	srv.NotifyToolsChanged() // no session initialized yet: nothing
	c.send(initLine(1, Version20251125))
	c.recv()
	srv.NotifyToolsChanged()
	c.expect(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	c.close()
}

func TestToolsListPagination(t *testing.T) {
	var tools []Tool
	for i := range 5 {
		tools = append(tools, Tool{Name: fmt.Sprintf("t%d", i), InputSchema: []byte(`{"type":"object"}`)})
	}
	srv := newTestServer(&fakeTools{set: NewToolSet(tools), call: echoCall})
	srv.PageSize = 2
	c := startClient(t, srv, Version20251125)
	var names []string
	cursor := ""
	for page := 0; page < 5; page++ {
		req := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		if cursor != "" {
			req = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"` + cursor + `"}}`
		}
		c.send(req)
		line := c.recv()
		for i := range 5 {
			if strings.Contains(line, fmt.Sprintf(`"name":"t%d"`, i)) {
				names = append(names, fmt.Sprint(i))
			}
		}
		_, after, ok := strings.Cut(line, `"nextCursor":"`)
		if !ok {
			break
		}
		cursor, _, _ = strings.Cut(after, `"`)
	}
	if got := strings.Join(names, ""); got != "01234" {
		t.Errorf("tools over all pages = %s, want 01234", got)
	}
	for _, bad := range []string{"nope", "bzk5OTk", "", encodeCursor(1<<40, 2)} {
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + bad + `"}}`)
		if line := c.recv(); !strings.Contains(line, `"code":-32602`) {
			t.Errorf("cursor %q: want -32602, got %s", bad, line)
		}
	}
	c.close()
}

// A cursor from before the tool list changed is refused: read as an
// offset into the new list, it would skip or repeat tools.
func TestACursorGoesStaleWhenTheListChanges(t *testing.T) {
	tools := func(names ...string) *ToolSet {
		var ts []Tool
		for _, n := range names {
			ts = append(ts, Tool{Name: n, InputSchema: []byte(`{"type":"object"}`)})
		}
		return NewToolSet(ts)
	}
	ft := &fakeTools{set: tools("a", "b", "c"), call: echoCall}
	srv := newTestServer(ft)
	srv.PageSize = 2
	c := startClient(t, srv, Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	_, after, _ := strings.Cut(c.recv(), `"nextCursor":"`)
	cursor, _, _ := strings.Cut(after, `"`)
	ft.mu.Lock()
	ft.set = tools("x", "a", "b", "c")
	ft.mu.Unlock()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + cursor + `"}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"tools/list: the tool list changed since this cursor was issued; list again from the start"}}`)
	c.close()
}

func TestProgressHeartbeatWhileTheCallRuns(t *testing.T) {
	release := make(chan struct{})
	srv := newTestServer(&fakeTools{set: testTools(), call: func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		<-release
		return TextResult("ok", false), nil
	}})
	srv.ProgressInterval = 5 * time.Millisecond
	c := startClient(t, srv, Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{},"_meta":{"progressToken":"tok"}}}`)
	for i := 1; i <= 2; i++ {
		line := c.recv()
		if !strings.Contains(line, `"method":"notifications/progress"`) || !strings.Contains(line, `"progressToken":"tok"`) || !strings.Contains(line, fmt.Sprintf(`"progress":%d`, i)) {
			t.Fatalf("heartbeat %d: %s", i, line)
		}
	}
	close(release)
	// Heartbeats may still be queued ahead of the response, but none follows it.
	for {
		line := c.recv()
		if strings.Contains(line, `"id":1`) {
			break
		}
	}
	c.close()
}

// A progress token that is neither a string nor an integer is treated as
// none: echoing it would make notifications the client finds invalid.
func TestOnlyStringAndIntegerProgressTokensGetHeartbeats(t *testing.T) {
	srv := newTestServer(&fakeTools{set: testTools(), call: func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		time.Sleep(30 * time.Millisecond)
		return TextResult("ok", false), nil
	}})
	srv.ProgressInterval = 5 * time.Millisecond
	c := startClient(t, srv, Version20251125)
	for i, tok := range []string{`null`, `{"a":1}`, `[1]`, `true`, `1.5`, `7`, `-3`} {
		id := strconv.Itoa(i + 1)
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"t_plain","arguments":{},"_meta":{"progressToken":` + tok + `}}}`)
		beats := 0
		for line := c.recv(); !strings.Contains(line, `"id":`+id+`,`); line = c.recv() {
			if !strings.Contains(line, `"progressToken":`+tok+`,`) {
				t.Fatalf("token %s: %s", tok, line)
			}
			beats++
		}
		if valid := i >= 5; valid != (beats > 0) {
			t.Errorf("token %s: %d heartbeats", tok, beats)
		}
	}
	c.close()
}

func TestShutdownWaitsForCallsWithinTheGracePeriod(t *testing.T) {
	started := make(chan string, 1)
	var cancelled atomic.Bool
	srv := newTestServer(&fakeTools{set: testTools(), call: func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		started <- ""
		<-ctx.Done()
		cancelled.Store(true)
		return TextResult("cancelled", true), nil
	}})
	srv.ShutdownGrace = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	c := startClientCtx(t, ctx, srv, Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain"}}`)
	<-started
	cancel()
	// The call is cancelled after the grace period; its response is still written.
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"cancelled"}],"isError":true}}`)
	if err := <-c.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if !cancelled.Load() {
		t.Error("the call's context was not cancelled")
	}
}

// A shutdown that comes after the input ended (a client closes stdin,
// then signals) also waits only for the grace period.
func TestShutdownAfterEOFKeepsTheGracePeriod(t *testing.T) {
	started := make(chan string, 1)
	srv := newTestServer(&fakeTools{set: testTools(), call: func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		started <- ""
		<-ctx.Done()
		return TextResult("cancelled", true), nil
	}})
	srv.ShutdownGrace = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(ctx, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain"}}`+"\n"), &out)
	}()
	<-started
	time.Sleep(20 * time.Millisecond) // let Serve meet the EOF first
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after a shutdown that followed EOF")
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"cancelled"}],"isError":true}}`; !strings.Contains(out.String(), want) {
		t.Errorf("output %q lacks the cancelled call's result", out.String())
	}
}

// At the in-flight limit, calls wait their turn without holding up the
// reader: a ping, a tool list and a cancellation still get through, and a
// cancelled call in line never runs. With the line full too, the reader
// waits.
func TestCallsPastTheLimitWaitWithoutBlockingTheReader(t *testing.T) {
	started, release := make(chan string, 4), make(chan struct{})
	srv := newTestServer(blockingTools(started, release))
	srv.MaxInFlight = 1
	c := startClient(t, srv, Version20251125)
	call := func(id string) {
		c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"t_plain","arguments":{"id":"` + id + `"}}}`)
	}
	call("a")
	if got := <-started; got != `{"id":"a"}` {
		t.Fatalf("started %s", got)
	}
	call("b") // in line
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if line := c.recv(); !strings.Contains(line, `"id":2,"result":{"tools":`) {
		t.Fatalf("want the tool list, got %.100s", line)
	}
	call("c") // in line
	call("d") // the line is full: the reader waits here
	sent := make(chan struct{})
	c.checker.ClientLine([]byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`))
	go func() {
		// Written into a pipe nobody reads until a place frees up.
		defer close(sent)
		if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n"); err != nil {
			t.Error(err)
		}
	}()
	select {
	case got := <-started:
		t.Fatalf("%s started while a call was running", got)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	want := map[string]bool{`{"jsonrpc":"2.0","id":3,"result":{}}`: true} // read once d found a place
	for _, id := range []string{"a", "c", "d"} {
		want[`{"jsonrpc":"2.0","id":"`+id+`","result":{"content":[{"type":"text","text":"done {\"id\":\"`+id+`\"}"}]}}`] = true
	}
	for range len(want) {
		if line := c.recv(); !want[line] {
			t.Errorf("unexpected %s", line)
		}
	}
	<-sent
	for range 2 {
		if got := <-started; got == `{"id":"b"}` {
			t.Error("the cancelled call ran")
		}
	}
	c.close()
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestAFailedWriteEndsTheSession(t *testing.T) {
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- newTestServer(nil).Serve(t.Context(), r, failingWriter{}) }()
	go func() { _, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("Serve = %v, want the write error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after a failed write")
	}
	w.Close()
}

func TestHandlerPanicsBecomeInternalErrors(t *testing.T) {
	srv := newTestServer(&fakeTools{set: testTools(), call: func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		panic("boom")
	}})
	c := startClient(t, srv, Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain"}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	c.close()
}

func TestVeryLargeListsArePagedByDefault(t *testing.T) {
	tools := make([]Tool, DefaultPageSize+1)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprintf("t%d", i), InputSchema: []byte(`{"type":"object"}`)}
	}
	c := startClient(t, newTestServer(&fakeTools{set: NewToolSet(tools), call: echoCall}), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	first := c.recv()
	if n := strings.Count(first, `"name":`); n != DefaultPageSize || !strings.Contains(first, `"nextCursor"`) {
		t.Fatalf("first page has %d tools, nextCursor %v", n, strings.Contains(first, `"nextCursor"`))
	}
	_, after, _ := strings.Cut(first, `"nextCursor":"`)
	cursor, _, _ := strings.Cut(after, `"`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + cursor + `"}}`)
	if second := c.recv(); strings.Count(second, `"name":`) != 1 || strings.Contains(second, "nextCursor") {
		t.Errorf("second page: %.200s", second)
	}
	c.close()
}

// blockingWriter accepts nothing until released: a client that stopped
// reading. entered receives a value when the first write blocks.
type blockingWriter struct{ entered, release chan struct{} }

func (w blockingWriter) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	return len(p), nil
}

func TestShutdownEndsEvenWhenTheClientStopsReading(t *testing.T) {
	srv := newTestServer(&fakeTools{set: testTools(), call: func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return TextResult(strings.Repeat("x", 1<<20), false), nil
	}})
	srv.ShutdownGrace = 50 * time.Millisecond
	r, w := io.Pipe()
	bw := blockingWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(bw.release)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, r, bw) }()
	go func() {
		for i := range 200 {
			if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_plain"}}`+"\n", i); err != nil {
				return
			}
		}
	}()
	<-bw.entered // the writer is stuck; responses pile up behind it
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stdout blocked") {
			t.Errorf("Serve = %v, want a stdout-blocked error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve hung at shutdown with a client that does not read")
	}
	w.Close()
}
