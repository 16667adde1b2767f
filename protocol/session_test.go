package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
)

const pong = `{"jsonrpc":"2.0","id":"after","result":{}}`
const ping = `{"jsonrpc":"2.0","id":"after","method":"ping"}`

func TestListChangedIsSentAfterInitializeOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		s := startSession(t, t.Context(), srv, Version20251125)
		srv.NotifyToolsChanged() // no session initialized yet: nothing
		if got := s.step(); len(got) != 0 {
			t.Errorf("before initialize: %q", got)
		}
		s.exchange(initLine(1, Version20251125))
		srv.NotifyToolsChanged()
		if got := s.step(); !cmp.Equal(got, []string{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`}) {
			t.Errorf("after initialize: %q", got)
		}
		s.close()
	})
}

func TestLoggingNotificationsFollowTheClientsLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(initLine(1, Version20251125))
		srv.Log(LevelError, "bridge", "before setLevel: not sent")
		s.expect(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`)
		srv.Log(LevelInfo, "bridge", "below the level: not sent")
		srv.Log(LevelWarning, "bridge", "manifest x.json: invalid JSON")
		srv.Log(LevelError, "bridge", map[string]any{"file": "x.json", "line": 3})
		want := []string{
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"bridge","data":"manifest x.json: invalid JSON"}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"bridge","data":{"file":"x.json","line":3}}}`,
		}
		if d := cmp.Diff(want, s.step()); d != "" {
			t.Errorf("log messages (-want +got):\n%s", d)
		}
		s.close()
	})
}

func TestListenStreamsGetListChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(modernReq(`"sub-1"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
		s.exchange(modernReq(`2`, "subscriptions/listen", `"notifications":{}`))
		srv.NotifyToolsChanged()
		want := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub-1"}}}`
		if got := s.step(); !cmp.Equal(got, []string{want}) {
			t.Errorf("after the change: %q", got)
		}
		// Ended by the client: no more list_changed, and no response.
		s.expect(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-1"}}`)
		srv.NotifyToolsChanged()
		if got := s.step(); len(got) != 0 {
			t.Errorf("after the stream ended: %q", got)
		}
		if rest, err := s.close(); len(rest) != 1 || !strings.Contains(rest[0], `"io.modelcontextprotocol/subscriptionId":2`) || err != nil {
			t.Errorf("at EOF: %q, %v", rest, err)
		}
	})
}

// A cursor is refused once the list it pages through has changed: read as
// an offset into another list, it would skip or repeat tools. An equal
// list, as a reload that changed nothing builds, keeps it valid.
func TestACursorGoesStaleWhenTheListChanges(t *testing.T) {
	tools := func(names ...string) *ToolSet {
		var ts []Tool
		for _, n := range names {
			ts = append(ts, Tool{Name: n})
		}
		return NewToolSet(ts)
	}
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTools{set: tools("a", "b", "c")}
		srv := newTestServer(ft)
		srv.PageSize = 2
		s := startSession(t, t.Context(), srv, Version20251125)
		first := s.exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		var page struct{ Result struct{ NextCursor string } }
		if len(first) != 1 || json.Unmarshal([]byte(first[0]), &page, json.MatchCaseInsensitiveNames(true)) != nil {
			t.Fatalf("first page: %q", first)
		}
		next := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + page.Result.NextCursor + `"}}`
		ft.setTools(tools("a", "b", "c"))
		s.expect(next, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}}`)
		ft.setTools(tools("x", "a", "b", "c"))
		s.expect(next, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"tools/list: the tool list changed since this cursor was issued; list again from the start"}}`)
		s.close()
	})
}

func TestVeryLargeListsArePagedByDefault(t *testing.T) {
	tools := make([]Tool, DefaultPageSize+1)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprintf("t%d", i)}
	}
	synctest.Test(t, func(t *testing.T) {
		s := startSession(t, t.Context(), newTestServer(&fakeTools{set: NewToolSet(tools)}), Version20251125)
		var page struct {
			Result struct {
				Tools      []Tool
				NextCursor string
			}
		}
		first := s.exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if err := json.Unmarshal([]byte(first[0]), &page, json.MatchCaseInsensitiveNames(true)); err != nil || len(page.Result.Tools) != DefaultPageSize || page.Result.NextCursor == "" {
			t.Fatalf("first page: %d tools, cursor %q, %v", len(page.Result.Tools), page.Result.NextCursor, err)
		}
		second := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + page.Result.NextCursor + `"}}`)
		page.Result.NextCursor = ""
		if err := json.Unmarshal([]byte(second[0]), &page, json.MatchCaseInsensitiveNames(true)); err != nil || len(page.Result.Tools) != 1 || page.Result.NextCursor != "" {
			t.Errorf("second page: %.200s", second)
		}
		s.close()
	})
}

func TestLongLinesUpToTheLimitAreServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startSession(t, t.Context(), newTestServer(nil), Version20251125)
		big := strings.Repeat("y", 3<<20)
		got := s.exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{"b":"` + big + `"}}}`)
		if len(got) != 1 || !strings.Contains(got[0], big) {
			t.Fatalf("3 MiB argument not echoed")
		}
		s.close()
	})
}

func TestOverlongMessages(t *testing.T) {
	const max = 1000
	tooLong := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"message longer than 1000 bytes; raise --max-message-size to accept it"}}`
	}
	pad := func(n int) string { return strings.Repeat("x", n) }
	// exactly returns a ping of max bytes.
	exactly := func() string {
		m := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"`
		return m + pad(max-len(m)-3) + `"}}`
	}
	tests := []struct {
		name, line string
		want       []string
	}{
		{"a request whose id comes first is answered with it",
			`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + pad(2000) + `"}}`, []string{tooLong("1")}},
		{"an id at the end of a line the read buffer holds is found",
			`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + pad(2000) + `"},"id":"z"}`, []string{tooLong(`"z"`)}},
		{"an id that is the last member is found at the end, as the TypeScript SDK writes it",
			`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + pad(200<<10) + `"},"id":1}`, []string{tooLong("1")}},
		{"a string id at the end too",
			`{"method":"ping","params":{"pad":"` + pad(200<<10) + `"},"jsonrpc":"2.0","id":"a\"b"}` + "\r", []string{tooLong(`"a\"b"`)}},
		{"an id inside the params at the end is not the message's",
			`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + pad(200<<10) + `","id":1}}`, nil},
		{"an id the first and last bytes do not show gets no answer",
			`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + pad(200<<10) + `"},"id":1,"x":"y"}`, nil},
		{"a notification gets no answer",
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"pad":"` + pad(2000) + `"}}`, nil},
		{"a response from the client gets no answer",
			`{"jsonrpc":"2.0","id":3,"result":{"pad":"` + pad(2000) + `"}}`, nil},
		{"a response whose result comes first gets no answer",
			`{"result":{"pad":"` + pad(200<<10) + `"},"jsonrpc":"2.0","id":3}`, nil},
		{"the limit is on the message, without its newline",
			exactly(), []string{`{"jsonrpc":"2.0","id":2,"result":{}}`}},
		{"nor its carriage return",
			exactly() + "\r", []string{`{"jsonrpc":"2.0","id":2,"result":{}}`}},
		{"a byte more is too long",
			exactly()[:len(exactly())-2] + `x"}}`, []string{tooLong("2")}},
		{"so is a byte more before a carriage return",
			exactly()[:len(exactly())-2] + "x\"}}\r", []string{tooLong("2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newTestServer(nil)
				srv.MaxMessageSize = max
				srv.MaxMessageSizeHint = "raise --max-message-size to accept it"
				s := startSession(t, t.Context(), srv, Version20251125)
				s.expect(tt.line, tt.want...)
				s.expect(ping, pong) // the session goes on
				s.close()
			})
		})
	}
}

func TestIDFromPrefix(t *testing.T) {
	for prefix, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12,"method"`:  `12`,
		`{"id":"a\"b","params":{"x":`:        `"a\"b"`,
		`{"a":{"id":1},"id":"x"`:             `"x"`,
		`{"jsonrpc":"2.0","id":12`:           ``, // it may be 1234
		`{"id":"ab`:                          ``,
		`{"params":{"pad":"xxxx`:             ``,
		`{"id":null,"method"`:                ``,
		`{"id":1.5,"method"`:                 ``,
		`{"id":1,"id":2,`:                    `1`,
		`[{"id":1}`:                          ``,
		``:                                   ``,
		`{"id":7,"result":{"a":"xxxxxxxxxx`:  `7 response`,
		`{"error":{"code":1},"id":7,"x":"xx`: `7 response`,
	} {
		id, response := idFromPrefix([]byte(prefix))
		got := string(id)
		if response {
			got += " response"
		}
		if got != want {
			t.Errorf("idFromPrefix(%s) = %s, want %s", prefix, got, want)
		}
	}
}

// Invalid UTF-8 in a member the server does not read costs nothing; in
// a value it reads or passes on, it is refused there.
func TestInvalidUTF8(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"in an id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id is not valid UTF-8"}}`},
		{"in params the method does not read", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"s\":\"\xff\xfe\"}}",
			`{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"in a method name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xffng\"}",
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"no method \\\"pi\ufffdng\\\"\"}}"},
		{"in a tool name", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t_pl\xffain\"}}",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params"}}`},
		{"in arguments", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t_plain\",\"arguments\":{\"a\":\"\xff\"}}}",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"tools/call: \"arguments\": invalid UTF-8 within \"/a\" after offset 6"}}`},
		{"in a progress token", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t_plain\",\"_meta\":{\"progressToken\":\"\xff\"}}}",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := startSession(t, t.Context(), newTestServer(nil), Version20251125)
				s.expect(tt.line, tt.want)
				s.close()
			})
		})
	}
}

func TestShutdownWaitsForCallsWithinTheGracePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		srv.ShutdownGrace = 3 * time.Second
		ctx, cancel := context.WithCancel(t.Context())
		s := startSession(t, ctx, srv, Version20251125)
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_wait"}}`)
		s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_slow","arguments":{"s":2}}}`)
		start := time.Now()
		cancel()
		err := <-s.served
		// t_slow finished within the grace period; t_wait was cancelled
		// after it. Both are answered.
		if d := time.Since(start); err != nil || d != 3*time.Second {
			t.Errorf("Serve = %v after %v, want nil after the grace period", err, d)
		}
		<-s.out
		want := []string{
			`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"cancelled"}],"isError":true}}`,
		}
		if d := cmp.Diff(want, s.take()); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
}

// A shutdown that comes after the input ended (a client closes stdin,
// then signals) also waits only for the grace period.
func TestShutdownAfterEOFKeepsTheGracePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		srv.ShutdownGrace = 3 * time.Second
		ctx, cancel := context.WithCancel(t.Context())
		s := startSession(t, ctx, srv, Version20251125)
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_wait"}}`)
		s.in.Close()
		synctest.Wait() // Serve met the EOF and waits for the call
		start := time.Now()
		cancel()
		if err := <-s.served; err != nil || time.Since(start) != 3*time.Second {
			t.Errorf("Serve = %v after %v", err, time.Since(start))
		}
		<-s.out
		if got := s.take(); len(got) != 1 || !strings.Contains(got[0], "cancelled") {
			t.Errorf("output %q lacks the cancelled call's result", got)
		}
	})
}

// gate is an io.Writer that accepts nothing until opened: a client that
// stopped reading.
type gate struct {
	w       io.Writer
	open    chan struct{}
	entered chan struct{} // receives once a write waits
}

func newGate(w io.Writer) *gate {
	return &gate{w: w, open: make(chan struct{}), entered: make(chan struct{}, 1)}
}

func (g *gate) Write(p []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.open
	return g.w.Write(p)
}

func TestShutdownEndsEvenWhenTheClientStopsReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		srv.ShutdownGrace = 3 * time.Second
		ctx, cancel := context.WithCancel(t.Context())
		var g *gate
		s := startSessionTo(t, ctx, srv, Version20251125, func(w io.Writer) io.Writer { g = newGate(w); return g })
		s.send(ping)
		<-g.entered // the writer is stuck
		cancel()
		if err := <-s.served; err == nil || !strings.Contains(err.Error(), "stdout blocked") {
			t.Errorf("Serve = %v, want a stdout-blocked error", err)
		}
		close(g.open)
		s.in.Close()
		<-s.out
	})
}

// A client that closes stdin, stops reading and then signals: Serve ends
// within the grace period of the signal.
func TestShutdownAfterEOFEndsWhenTheClientStopsReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		srv.ShutdownGrace = 3 * time.Second
		ctx, cancel := context.WithCancel(t.Context())
		var g *gate
		s := startSessionTo(t, ctx, srv, Version20251125, func(w io.Writer) io.Writer { g = newGate(w); return g })
		s.send(ping)
		<-g.entered // the writer is stuck
		s.in.Close()
		time.Sleep(time.Minute)
		synctest.Wait() // Serve met the EOF and waits for the writer
		start := time.Now()
		cancel()
		if err := <-s.served; err == nil || !strings.Contains(err.Error(), "stdout blocked") || time.Since(start) != 3*time.Second {
			t.Errorf("Serve = %v after %v, want a stdout-blocked error after 3s", err, time.Since(start))
		}
		close(g.open)
		<-s.out
	})
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestAFailedWriteEndsTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startSessionTo(t, t.Context(), newTestServer(nil), Version20251125, func(io.Writer) io.Writer { return failingWriter{} })
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_wait"}}`)
		s.send(ping)
		if err := <-s.served; err == nil || err.Error() != "writing to the client: broken pipe" {
			t.Errorf("Serve = %v, want the write error", err)
		}
		s.in.Close()
		<-s.out
	})
}

// At the in-flight limit, calls wait their turn without holding up the
// reader: a ping, a tool list and a cancellation still get through, and a
// cancelled call in line never runs. With the line full too, the reader
// waits.
func TestCallsPastTheLimitWaitWithoutBlockingTheReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started []string
		release := make(chan struct{})
		ft := &fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
			"t_plain": func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
				started = append(started, string(req.Arguments)) // one call runs at a time
				<-release
				return TextResult("done "+string(req.Arguments), false), nil
			},
		}}
		srv := newTestServer(ft)
		srv.MaxInFlight = 1
		s := startSession(t, t.Context(), srv, Version20251125)
		call := func(id string) string {
			return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"t_plain","arguments":{"id":"` + id + `"}}}`
		}
		s.expect(call("a"))
		s.expect(call("b")) // in line
		s.expect(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`)
		s.expect(ping, pong)
		if got := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); len(got) != 1 || !strings.Contains(got[0], `"id":2,"result":{"tools":`) {
			t.Fatalf("want the tool list, got %.100s", got)
		}
		s.expect(call("c")) // in line
		s.expect(call("d")) // the line is full: the reader waits here
		s.checker.ClientLine([]byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`))
		sent := make(chan struct{})
		go func() { // read once d found a place
			defer close(sent)
			io.WriteString(s.in, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
		}()
		if got := s.step(); len(got) != 0 || !cmp.Equal(started, []string{`{"id":"a"}`}) {
			t.Fatalf("with the line full: wrote %q, started %q", got, started)
		}
		close(release)
		<-sent
		got, err := s.close()
		want := []string{`{"jsonrpc":"2.0","id":3,"result":{}}`}
		for _, id := range []string{"a", "c", "d"} {
			want = append(want, `{"jsonrpc":"2.0","id":"`+id+`","result":{"content":[{"type":"text","text":"done {\"id\":\"`+id+`\"}"}]}}`)
		}
		if d := cmp.Diff(want, got, cmpSorted); d != "" || err != nil {
			t.Errorf("Serve: %v; (-want +got):\n%s", err, d)
		}
		if !cmp.Equal(started, []string{`{"id":"a"}`, `{"id":"c"}`, `{"id":"d"}`}) {
			t.Errorf("started %q; the cancelled call must not run", started)
		}
	})
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	return slices.Sorted(slices.Values(in))
})

// Listen streams never end by themselves, so they take no slot of the
// in-flight limit: calls still run beside them. Their own number is
// bounded.
func TestListenStreamsDoNotStarveCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		srv.MaxInFlight = 1
		s := startSession(t, t.Context(), srv, Version20251125)
		listen := func(id string) []string {
			return s.exchange(modernReq(`"`+id+`"`, "subscriptions/listen", `"notifications":{}`))
		}
		for i := range maxListens {
			if got := listen(fmt.Sprint("s", i)); len(got) != 1 || !strings.Contains(got[0], "notifications/subscriptions/acknowledged") {
				t.Fatalf("stream %d: want its acknowledgement, got %q", i, got)
			}
		}
		if got := listen("over"); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("too many open streams and waits (subscriptions/listen, tasks/result) (%d)", maxListens)) {
			t.Fatalf("one stream too many: %q", got)
		}
		if got := s.exchange(modernReq("1", "tools/call", `"name":"t_plain","arguments":{"a":1}`)); len(got) != 1 || !strings.Contains(got[0], `"id":1,"result"`) {
			t.Fatalf("want the call's result beside the streams, got %q", got)
		}
		s.exchange(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s0"}}`)
		if got := listen("again"); len(got) != 1 || !strings.Contains(got[0], "notifications/subscriptions/acknowledged") {
			t.Fatalf("a stream ended makes room for another: %q", got)
		}
		got, err := s.close()
		if len(got) != maxListens || err != nil {
			t.Errorf("at EOF: %d final results, want %d; Serve: %v", len(got), maxListens, err)
		}
	})
}

// A client that stops reading while large results arrive gets
// backpressure: the reader stops, and calls wait before they hold more of
// a result, so the bytes held for it stay at the bound (plus the oldest
// call's result), instead of growing with every request.
func TestHeldBytesAreBounded(t *testing.T) {
	const (
		limit    = 1 << 20
		result   = 100 << 10
		inFlight = 8
		calls    = 100
	)
	synctest.Test(t, func(t *testing.T) {
		var started atomic.Int32
		big := jsontext.Value(`"` + strings.Repeat("x", result-2) + `"`)
		ft := &fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
			"t_plain": func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
				started.Add(1)
				// As the socket client reads a reply: counted, then held.
				for n := 0; n < result; n += 16 << 10 {
					if err := call.Grow(ctx, 16<<10); err != nil {
						return nil, err
					}
				}
				return JSONResult(bytes.Clone(big)), nil
			},
		}}
		srv := newTestServer(ft)
		srv.MaxHeldBytes, srv.MaxInFlight = limit, inFlight
		var g *gate
		s := startSessionTo(t, t.Context(), srv, Version20251125, func(w io.Writer) io.Writer { g = newGate(w); return g })
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			for i := range calls {
				line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_plain"}}`, i)
				s.checker.ClientLine([]byte(line))
				io.WriteString(s.in, line+"\n")
			}
		}()
		synctest.Wait() // the client sends until the server stops reading
		if held := srv.heldBytes(); held < limit-(16<<10) || held > limit+result+(64<<10) {
			t.Errorf("%d bytes held, want the bound of %d, and at most one result more", held, limit)
		}
		if n := started.Load(); n == calls {
			t.Errorf("all %d calls ran for a client that reads nothing", n)
		}
		close(g.open)
		<-sent
		got, err := s.close()
		if len(got) != calls || err != nil {
			t.Errorf("%d responses, want %d; Serve: %v", len(got), calls, err)
		}
		if held := srv.heldBytes(); held != 0 {
			t.Errorf("%d bytes still counted once every response was written", held)
		}
	})
}

// A 2025-03-26 batch of many tools/list requests over a large tool set
// is answered within the bound, every request exactly once.
func TestABatchOfManyListsIsBounded(t *testing.T) {
	const limit = 1 << 20
	tools := make([]Tool, 200)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprintf("tool_%03d", i), Description: strings.Repeat("Does things. ", 20)}
	}
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(&fakeTools{set: NewToolSet(tools)})
		srv.MaxHeldBytes = limit
		s := startSession(t, t.Context(), srv, Version20250326)
		s.exchange(initLine(1, Version20250326))
		var elems []string
		for i := range 100 {
			elems = append(elems, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i))
		}
		got := s.exchange("[" + strings.Join(elems, ",") + "]")
		var resps []struct {
			ID    int
			Error *Error
		}
		if len(got) != 1 || json.Unmarshal([]byte(got[0]), &resps, json.MatchCaseInsensitiveNames(true)) != nil {
			t.Fatalf("batch response: %.300q", got)
		}
		if len(got[0]) > limit+100*300 {
			t.Errorf("the batch's response is %d bytes, past the bound of %d", len(got[0]), limit)
		}
		dropped := 0
		for i, r := range resps {
			if r.ID != i {
				t.Errorf("response %d answers id %d", i, r.ID)
			}
			if r.Error != nil {
				dropped++
			}
		}
		if len(resps) != 100 || dropped == 0 || dropped == 100 {
			t.Errorf("%d responses, %d dropped", len(resps), dropped)
		}
		s.close()
	})
}

func TestWireError(t *testing.T) {
	data := jsontext.Value(`{"uri":"x"}`)
	tests := []struct {
		err  error
		want *Error
	}{
		{ErrInvalidParams, ErrInvalidParams},
		{fmt.Errorf("%w: unknown tool %q", ErrInvalidParams, "x"), &Error{Code: CodeInvalidParams, Message: `unknown tool "x"`}},
		{fmt.Errorf("tools/call: %w", &Error{Code: CodeResourceNotFound, Message: "gone", Data: data}), &Error{Code: CodeResourceNotFound, Message: "tools/call: gone", Data: data}},
		{errors.New("disk on fire"), &Error{Code: CodeInternalError, Message: "disk on fire"}},
	}
	for _, tt := range tests {
		if got := WireError(tt.err); !cmp.Equal(got, tt.want) {
			t.Errorf("WireError(%v) = %+v, want %+v", tt.err, got, tt.want)
		}
	}
	if got := fmt.Errorf("%w: x", ErrInvalidParams).Error(); got != "invalid params: x" {
		t.Errorf("Error() = %q, want the message alone", got)
	}
	if !errors.Is(&Error{Code: CodeInvalidParams, Message: "other"}, ErrInvalidParams) {
		t.Error("errors.Is does not compare codes")
	}
}

// Equal compares what clients of any version see.
func TestToolSetEqual(t *testing.T) {
	base := Tool{Name: "a", Description: "A.", InputSchema: jsontext.Value(`{"type":"object"}`)}
	with := func(f func(*Tool)) *ToolSet { t := base; f(&t); return NewToolSet([]Tool{t}) }
	same := NewToolSet([]Tool{base})
	if !same.Equal(with(func(t *Tool) { t.InputSchema = jsontext.Value(`{ "type": "object" }`) })) {
		t.Error("white space in a schema makes sets differ")
	}
	if !same.Equal(with(func(t *Tool) { t.Annotations = &ToolAnnotations{} })) {
		t.Error("empty annotations make sets differ")
	}
	for name, f := range map[string]func(*Tool){
		"title":       func(t *Tool) { t.Title = "T" },
		"annotations": func(t *Tool) { t.Annotations = &ToolAnnotations{ReadOnlyHint: yes()} },
		"output":      func(t *Tool) { t.OutputSchema = jsontext.Value(`{}`) },
	} {
		if same.Equal(with(f)) {
			t.Errorf("sets differing in %s are equal", name)
		}
	}
	if NewToolSet(nil).Equal(nil) || !(*ToolSet)(nil).Equal(nil) {
		t.Error("nil sets")
	}
}

// The log line for initialize carries the client's name and version, cut
// short and made valid UTF-8, never its clientInfo as sent.
func TestInitializeLogsTheClientSafely(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs strings.Builder
		srv := newTestServer(nil)
		log := zerolog.New(&logs)
		srv.Logger = &log
		s := startSession(t, t.Context(), srv, Version20251125)
		huge := strings.Repeat("n", 5<<20)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + huge + "\xff" + `","version":"1","extra":"` + huge + `"}}}`)
		s.close()
		for _, line := range strings.Split(logs.String(), "\n") {
			if len(line) > 4<<10 || !utf8.ValidString(line) {
				t.Errorf("a log line of %d bytes (valid UTF-8: %v): %.200s", len(line), utf8.ValidString(line), line)
			}
		}
		if !strings.Contains(logs.String(), `"client":"nnnn`) {
			t.Errorf("the log does not name the client:\n%.500s", logs.String())
		}
	})
}

// The client's name and version are logged as fields of one line, as the
// audit log records them: its controls, bidi formatting characters and
// line separators replaced.
func TestInitializeLogsTheClientOnOneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs strings.Builder
		srv := newTestServer(nil)
		log := zerolog.New(&logs)
		srv.Logger = &log
		s := startSession(t, t.Context(), srv, Version20251125)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"evil\u001b]0;title\u0007\u202e\u2028x","version":"1\n2"}}}`)
		s.close()
		var line struct {
			Message       string `json:"message"`
			Client        string `json:"client"`
			ClientVersion string `json:"client_version"`
		}
		for _, l := range strings.Split(logs.String(), "\n") {
			if json.Unmarshal([]byte(l), &line) == nil && line.Message == "initialize" {
				break
			}
		}
		if line.Client != "evil\uFFFD]0;title\uFFFD\uFFFD\uFFFDx" || line.ClientVersion != "1\uFFFD2" {
			t.Errorf("logged client %q, version %q", line.Client, line.ClientVersion)
		}
	})
}

// A handler's panic is answered as an internal error and logged once, with
// its stack, not again as a failed request.
func TestAPanicIsLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs strings.Builder
		srv := newTestServer(nil)
		log := zerolog.New(&logs).Level(zerolog.ErrorLevel)
		srv.Logger = &log
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(initLine(1, Version20251125))
		s.expect(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_panic"}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"internal error"}}`)
		s.close()
		if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), "panicked") {
			t.Errorf("%d error lines, want the panic once:\n%s", n, logs.String())
		}
	})
}

// Progress heartbeats for a client that does not read are not queued
// without bound: one per call at most waits to be written, and none when
// the budget is full; the calls are answered once the client reads.
func TestHeartbeatsForAClientThatDoesNotReadAreBounded(t *testing.T) {
	const (
		limit = 4 << 20
		token = 256 << 10 // a big progress token: each heartbeat echoes it
		calls = 64
	)
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		srv.MaxHeldBytes, srv.ProgressInterval = limit, time.Second
		var g *gate
		s := startSessionTo(t, t.Context(), srv, Version20251125, func(w io.Writer) io.Writer { g = newGate(w); return g })
		tok := `"` + strings.Repeat("p", token) + `"`
		sent := make(chan struct{})
		go func() { // until the reader stops: the requests fill the budget too
			defer close(sent)
			for i := range calls {
				line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_slow","arguments":{"s":60},"_meta":{"progressToken":%s}}}`, i, tok)
				s.checker.ClientLine([]byte(line))
				io.WriteString(s.in, line+"\n")
			}
		}()
		for range 30 { // half a minute of heartbeats, every second
			time.Sleep(time.Second)
			synctest.Wait()
			if held := srv.heldBytes(); held > limit+2*token {
				t.Fatalf("%d bytes held after queued heartbeats, past the bound of %d", held, limit)
			}
		}
		close(g.open)
		<-sent
		got, err := s.close()
		results := 0
		for _, l := range got {
			if strings.Contains(l, `"result"`) {
				results++
			}
		}
		if results != calls || err != nil {
			t.Errorf("%d results, want %d; Serve: %v", results, calls, err)
		}
	})
}

// Each session negotiates once: a version the bridge speaks is echoed,
// any other (a modern one included, which initialize cannot carry) gets
// the newest legacy version.
func TestInitializeNegotiatesAVersion(t *testing.T) {
	for requested, want := range map[string]string{
		Version20241105: Version20241105, Version20250326: Version20250326, Version20250618: Version20250618,
		Version20251125: Version20251125, Version20260728: LatestLegacyVersion, "2099-01-01": LatestLegacyVersion, "1.0": LatestLegacyVersion,
	} {
		t.Run(requested, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := startSession(t, t.Context(), newTestServer(nil), LatestLegacyVersion)
				got := s.exchange(initLine(1, requested))
				if len(got) != 1 || !strings.Contains(got[0], `"protocolVersion":"`+want+`"`) {
					t.Errorf("initialize %s: %q, want %s", requested, got, want)
				}
				s.close()
			})
		})
	}
}
