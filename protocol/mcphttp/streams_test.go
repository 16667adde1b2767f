package mcphttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// withMeta adds member to the _meta of a modern request.
func withMeta(body, member string) string {
	return strings.Replace(body, `"_meta":{`, `"_meta":{`+member+",", 1)
}

// method returns the method of a message, or "" for a response.
func method(msg string) string {
	env, _ := protocol.Inspect([]byte(msg))
	return env.Method
}

// A request whose call sends notifications first is answered as an event
// stream: the notifications, then the response, then the stream's end.
func TestNotificationsFirstMakeAnEventStream(t *testing.T) {
	tests := []struct {
		name  string
		era   string // a legacy version, or "" for the modern era
		setup string // a request sent first, in the session
		body  string
		first string // the method of the first event
	}{
		{"progress, legacy", "2025-11-25", "", request(2, "tools/call", `{"name":"gate","arguments":{},"_meta":{"progressToken":"p1"}}`), "notifications/progress"},
		{"progress, modern", "", "", withMeta(modern(2, "tools/call", `"name":"gate","arguments":{}`), `"progressToken":7`), "notifications/progress"},
		{"a log message, legacy", "2025-06-18", request(9, "logging/setLevel", `{"level":"info"}`), call(2, "log", `{}`), "notifications/message"},
		{"a log message, modern", "", "", withMeta(modern(2, "tools/call", `"name":"log","arguments":{}`), `"io.modelcontextprotocol/logLevel":"info"`), "notifications/message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBridge(t, Options{}, func(s *protocol.Server) { s.ProgressInterval = 5 * time.Millisecond })
			c := b.modern(t)
			if tt.era != "" {
				c = b.legacy(t, tt.era)
			}
			if tt.setup != "" {
				if r := c.post(tt.setup); r.status != http.StatusOK {
					t.Fatalf("setup: %d %s", r.status, r.body)
				}
			}
			s := c.open(http.MethodPost, tt.body)
			if got := s.resp.Header.Get("X-Accel-Buffering"); got != "no" {
				t.Errorf("X-Accel-Buffering %q, want no", got)
			}
			if got := method(s.next()); got != tt.first {
				t.Errorf("first event %q, want %q", got, tt.first)
			}
			b.tools.open()
			rest := s.end()
			if len(rest) == 0 || method(rest[len(rest)-1]) != "" || !strings.Contains(rest[len(rest)-1], `"id":2`) {
				t.Fatalf("the stream did not end with the response: %q", rest)
			}
			for _, ev := range rest[:len(rest)-1] {
				if m := method(ev); m != tt.first {
					t.Errorf("an event %q among the %s ones", m, tt.first)
				}
			}
		})
	}
}

// The GET stream of a legacy session carries what belongs to no
// request: list changes and log messages. A second GET takes its place.
func TestTheGETStreamCarriesServerMessages(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.legacy(t, "2025-11-25")
	if r := c.post(request(2, "logging/setLevel", `{"level":"warning"}`)); r.status != http.StatusOK {
		t.Fatalf("logging/setLevel: %d %s", r.status, r.body)
	}
	s := c.open(http.MethodGet, "")
	b.srv.NotifyToolsChanged()
	if got := method(s.next()); got != "notifications/tools/list_changed" {
		t.Errorf("got %s, want a list change", got)
	}
	b.srv.Log(protocol.LevelInfo, "test", "below the level asked for")
	b.srv.Log(protocol.LevelError, "test", "the backend went away")
	if ev := s.next(); method(ev) != "notifications/message" || !strings.Contains(ev, "the backend went away") {
		t.Errorf("got %s, want the error log message", ev)
	}

	second := c.open(http.MethodGet, "")
	if rest := s.end(); len(rest) > 0 {
		t.Errorf("the replaced stream carried %q", rest)
	}
	b.srv.NotifyToolsChanged()
	if got := method(second.next()); got != "notifications/tools/list_changed" {
		t.Errorf("the new stream got %s, want a list change", got)
	}
	// A response is never sent on it: a request's answer goes to its POST.
	if r := c.post(request(3, "ping", "")); r.status != http.StatusOK || mediaType(r.header.Get("Content-Type")) != "application/json" {
		t.Errorf("ping with a GET stream open: %d %s", r.status, r.body)
	}
}

// DELETE ends the session: its calls are cancelled and answered, its GET
// stream ends, and every later request is 404.
func TestDeleteCancelsTheSessionsCalls(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.legacy(t, "2025-11-25")
	get := c.open(http.MethodGet, "")
	answered := make(chan *reply, 1)
	go func() { answered <- c.post(call(2, "wait", `{}`)) }() // ends when the call is answered
	waitFor(t, b.tools.started, "call started")
	if r := c.do(http.MethodDelete, ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	waitFor(t, b.tools.cancelled, "cancellation of the call")
	if r := waitFor(t, answered, "answer to the call"); r.status != http.StatusOK || !strings.Contains(string(r.body), `"isError":true`) {
		t.Errorf("the cancelled call's answer: %d %s", r.status, r.body)
	}
	get.end()
	if r := c.post(request(3, "ping", "")); r.status != http.StatusNotFound {
		t.Errorf("ping after DELETE: %d %s", r.status, r.body)
	}
}

// In the legacy era a disconnection is not a cancellation (the client
// sends notifications/cancelled for that), as 2025-11-25 says.
func TestALegacyCallOutlivesItsConnection(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.legacy(t, "2025-11-25")
	ctx, hangUp := context.WithCancel(t.Context())
	c.check.ClientLine([]byte(call(2, "gate", `{}`)))
	gone := make(chan error, 1)
	go func() { // ends when the client hangs up
		resp, err := b.hc.Do(c.request(ctx, http.MethodPost, call(2, "gate", `{}`), nil))
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	waitFor(t, b.tools.started, "call started")
	hangUp()
	waitFor(t, gone, "the client's end")
	waitFor(t, b.closed, "the connection's end") // the handler has seen it
	select {
	case <-b.tools.cancelled:
		t.Fatal("the call was cancelled by the disconnection")
	default:
	}
	// notifications/cancelled cancels it.
	c.post(notification("notifications/cancelled", `{"requestId":2}`))
	waitFor(t, b.tools.cancelled, "cancellation by notifications/cancelled")
}

// A call the client cancels with notifications/cancelled gets no
// response, but its POST's response ends all the same (an event stream
// without events), as does that of a 2025-03-26 batch whose requests were
// all cancelled: nothing is left open for them.
func TestACancelledCallsResponseEnds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version, body string
		cancel        []int
	}{
		{"2025-11-25", call(2, "gate", `{}`), []int{2}},
		{"2025-06-18", call(2, "gate", `{}`), []int{2}},
		{"2025-03-26", "[" + call(2, "gate", `{}`) + "," + call(3, "gate", `{}`) + "]", []int{2, 3}},
	} {
		t.Run(tt.version, func(t *testing.T) {
			t.Parallel()
			b := newBridge(t, Options{}, nil)
			c := b.legacy(t, tt.version)
			answered := make(chan *reply, 1)
			go func() { answered <- c.post(tt.body) }()
			for range tt.cancel {
				waitFor(t, b.tools.started, "call started")
			}
			for _, id := range tt.cancel {
				if r := c.post(notification("notifications/cancelled", fmt.Sprintf(`{"requestId":%d}`, id))); r.status != http.StatusAccepted {
					t.Fatalf("notifications/cancelled: %d %s", r.status, r.body)
				}
			}
			r := waitFor(t, answered, "the cancelled call's response to end")
			if r.status != http.StatusOK || mediaType(r.header.Get("Content-Type")) != "text/event-stream" || len(r.events) != 0 {
				t.Errorf("HTTP %d, %s, events %q; want 200, an event stream without events", r.status, r.header.Get("Content-Type"), r.events)
			}
			if r := c.post(request(4, "ping", "")); r.status != http.StatusOK {
				t.Errorf("the session after the cancellation: %d %s", r.status, r.body)
			}
		})
	}
}

// In the modern era, closing the response stream cancels the request.
func TestClosingAModernResponseCancelsTheRequest(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.modern(t)
	ctx, hangUp := context.WithCancel(t.Context())
	body := modern(1, "tools/call", `"name":"wait","arguments":{}`)
	go func() { // ends when the client hangs up
		resp, err := b.hc.Do(c.request(ctx, http.MethodPost, body, nil))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	waitFor(t, b.tools.started, "call started")
	hangUp()
	waitFor(t, b.tools.cancelled, "cancellation by the closed stream")
}

// subscriptions/listen is an event stream whose first event is the
// acknowledgement; list changes follow; closing it ends the request.
func TestSubscriptionsListenIsAnEventStream(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{MaxStreams: 1}, nil)
	c := b.modern(t)
	listen := modern(1, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)
	s := c.open(http.MethodPost, listen)
	if ev := s.next(); method(ev) != "notifications/subscriptions/acknowledged" || !strings.Contains(ev, `"toolsListChanged":true`) {
		t.Fatalf("first event %s, want the acknowledgement", ev)
	}
	b.srv.NotifyToolsChanged()
	if ev := s.next(); method(ev) != "notifications/tools/list_changed" || !strings.Contains(ev, `"io.modelcontextprotocol/subscriptionId":1`) {
		t.Errorf("got %s, want the list change of subscription 1", ev)
	}
	// Streams are bounded: past MaxStreams, 503.
	if r := c.post(modern(2, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)); r.status != http.StatusServiceUnavailable {
		t.Errorf("a listen stream past the limit: %d %s", r.status, r.body)
	}
	s.stop()
	waitFor(t, b.closed, "the stream's end")
	s = c.open(http.MethodPost, listen)
	if ev := s.next(); method(ev) != "notifications/subscriptions/acknowledged" {
		t.Errorf("a listen stream after the first closed: %s", ev)
	}
}
