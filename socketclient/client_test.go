package socketclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

func newClient(t *testing.T, path string, opts *Options) *Client {
	t.Helper()
	c := New(path, opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func callCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// echo calls c with params and checks that they come back.
func echo(t *testing.T, c *Client, params string) {
	t.Helper()
	res, err := c.Call(callCtx(t, 5*time.Second), "echo", jsontext.Value(params), nil)
	if err != nil || string(res) != params {
		t.Errorf("Call(%s) = %s, %v; want its params back", params, res, err)
	}
}

// shortTempDir returns a directory whose paths fit in a socket address.
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// returns is a handler that answers every request with result.
func returns(result string) sockettest.Handler {
	return func(context.Context, sockettest.Request) (any, error) { return jsontext.Value(result), nil }
}

func TestCall(t *testing.T) {
	big := `"` + strings.Repeat("é", 300<<10) + `"` // longer than the read buffer
	paramsAsReceived := func(_ context.Context, r sockettest.Request) (any, error) {
		if r.Params == nil {
			return "none", nil
		}
		return string(r.Params), nil
	}
	tests := []struct {
		name    string
		handler sockettest.Handler
		method  string
		params  string
		want    string
		wantErr error
	}{
		{name: "a result comes back byte for byte", handler: returns(`{"a": [1, 2.50, "\u00e9"], "b": 1e3}`), want: `{"a": [1, 2.50, "\u00e9"], "b": 1e3}`},
		{name: "a null result is a result", params: `null`, want: `null`},
		{name: "a result longer than the read buffer comes back whole", params: big, want: big},
		{name: "a result with invalid UTF-8 comes back with U+FFFD", handler: returns("{\"a\": \"x\xffy\"}"), want: `{"a":"x` + "\uFFFD" + `y"}`},
		{name: "params go out compact", handler: paramsAsReceived, params: "{\n  \"a\": [1, 2.50]\n}", want: `"{\"a\":[1,2.50]}"`},
		{name: "no params are sent as none", handler: paramsAsReceived, params: ``, want: `"none"`},
		{name: "blank params are sent as none", handler: paramsAsReceived, params: "  ", want: `"none"`},
		{name: "the method name arrives unchanged", method: "we\"ird\\ \u00e9.method",
			handler: func(_ context.Context, r sockettest.Request) (any, error) { return r.Method, nil },
			want:    `"we\"ird\\ é.method"`},
		{name: "a backend error keeps code, message and data",
			handler: func(context.Context, sockettest.Request) (any, error) {
				return nil, &sockettest.Error{Code: -32011, Message: "Permission denied", Data: map[string]string{"reason": "no"}}
			},
			wantErr: &RPCError{Code: -32011, Message: "Permission denied", Data: jsontext.Value(`{"reason":"no"}`)}},
		{name: "a backend error without data has none",
			handler: func(context.Context, sockettest.Request) (any, error) {
				return nil, &sockettest.Error{Code: -32601, Message: "Method not found"}
			},
			wantErr: &RPCError{Code: -32601, Message: "Method not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sockettest.NewServer(t, tt.handler)
			c := newClient(t, s.Path, nil)
			method := tt.method
			if method == "" {
				method = "m.x"
			}
			res, err := c.Call(callCtx(t, 5*time.Second), method, jsontext.Value(tt.params), nil)
			if tt.wantErr != nil {
				var rpcErr *RPCError
				if !errors.As(err, &rpcErr) {
					t.Fatalf("err = %v, want an *RPCError", err)
				}
				if diff := cmp.Diff(tt.wantErr, rpcErr); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if !errors.Is(err, &RPCError{Code: rpcErr.Code}) || errors.Is(err, &RPCError{Code: 1}) {
					t.Errorf("errors.Is does not compare codes")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res) != tt.want {
				t.Errorf("result = %.80s, want %.80s", res, tt.want)
			}
		})
	}
}

func TestInvalidParamsAreNotSent(t *testing.T) {
	for _, params := range []string{"{\n", `{"a":1} x`, "\"\xff\""} {
		s := sockettest.NewServer(t, nil)
		_, err := newClient(t, s.Path, nil).Call(callCtx(t, 5*time.Second), "m", jsontext.Value(params), nil)
		if err == nil || !strings.Contains(err.Error(), "encode backend request") {
			t.Errorf("params %q: err = %v, want invalid params", params, err)
		}
		if got := s.Accepted(); got != 0 {
			t.Errorf("params %q: %d connections made for a request that cannot be sent", params, got)
		}
	}
}

func TestRPCErrorMessage(t *testing.T) {
	err := error(&RPCError{Code: -32011, Message: "Permission denied"})
	if got, want := err.Error(), "backend error -32011: Permission denied"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(t *testing.T) string // returns the socket path
		want        string                    // after the path
		pathProblem bool                      // the path holds no socket
	}{
		{name: "a missing socket names the path and the reason", want: "no socket there; is the backend running?", pathProblem: true,
			setup: func(t *testing.T) string { return filepath.Join(shortTempDir(t), "none.sock") }},
		{name: "a regular file says it is not a socket", want: "a regular file, not a socket", pathProblem: true,
			setup: func(t *testing.T) string {
				path := filepath.Join(shortTempDir(t), "file.sock")
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				return path
			}},
		{name: "a folder says it is not a socket", want: "a folder, not a socket", pathProblem: true,
			setup: func(t *testing.T) string { return shortTempDir(t) }},
		{name: "a socket nobody listens on is refused", want: "connect: connection refused",
			setup: func(t *testing.T) string {
				path := filepath.Join(shortTempDir(t), "dead.sock")
				ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
				if err != nil {
					t.Fatal(err)
				}
				ln.SetUnlinkOnClose(false) // leave the file, as a crashed backend does
				ln.Close()
				return path
			}},
		{name: "a stopped backend is missing", want: "no socket there; is the backend running?", pathProblem: true,
			setup: func(t *testing.T) string {
				s := sockettest.NewServer(t, nil)
				s.Stop()
				return s.Path
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t)
			c := newClient(t, path, nil)
			_, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil)
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			if want := "backend unavailable at " + path + ": " + tt.want; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("err = %q, want it to start %q", err, want)
			}
			var pathErr *SocketPathError
			if errors.As(err, &pathErr) != tt.pathProblem {
				t.Errorf("err = %v: want a *SocketPathError exactly where the path holds no socket", err)
			}
			if err := c.Check(callCtx(t, 5*time.Second)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}

// Check connects and keeps the connection for the next call.
func TestCheckKeepsItsConnection(t *testing.T) {
	s := sockettest.NewServer(t, sockettest.Echo)
	c := newClient(t, s.Path, nil)
	if err := c.Check(callCtx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := s.Accepted(); n != 1 {
		t.Errorf("%d connections, want the one Check made", n)
	}
}

// rawBackend serves each connection with serve, called once per
// connection with the connection and its reader, until serve returns
// false (then the connection is closed). It returns the socket path.
func rawBackend(t *testing.T, serve func(c *net.UnixConn, r *bufio.Reader) bool) string {
	t.Helper()
	path := filepath.Join(shortTempDir(t), "raw.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	// The accept loop ends when the cleanup closes ln; it waits for the
	// connections it served.
	go func() {
		defer wg.Done()
		var conns sync.WaitGroup
		defer conns.Wait()
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			conns.Add(1)
			// Serves one connection until serve gives up or the client goes.
			go func() {
				defer conns.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for serve(c, r) {
				}
			}()
		}
	}()
	return path
}

// requestID returns the id of a request line.
func requestID(line []byte) jsontext.Value {
	var req struct {
		ID jsontext.Value `json:"id"`
	}
	json.Unmarshal(line, &req)
	return req.ID
}

// answer reads one request line and answers it with result.
func answer(c *net.UnixConn, r *bufio.Reader, result string) bool {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return false
	}
	_, err = fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", requestID(line), result)
	return err == nil
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name    string
		fault   sockettest.Fault
		handler sockettest.Handler
		max     int
		want    error
		text    string
	}{
		{name: "garbage is a bad reply", fault: sockettest.FaultGarbage, want: ErrBadReply, text: "invalid character"},
		{name: "a wrong id is a bad reply", fault: sockettest.FaultWrongID, want: ErrBadReply, text: "answered id 2 to request id 1"},
		{name: "closing mid-reply is a bad reply", fault: sockettest.FaultCloseMidReply, want: ErrBadReply, text: "connection closed mid-reply"},
		{name: "closing before the reply is a bad reply", fault: sockettest.FaultCloseBeforeReply, want: ErrBadReply, text: "connection closed before the reply"},
		{name: "a huge reply is refused", fault: sockettest.FaultHugeReply, max: 1 << 20, want: ErrBadReply, text: "reply longer than 1048576 bytes"},
		{name: "a reply over a limit smaller than the read buffer is refused", max: 1000,
			handler: func(context.Context, sockettest.Request) (any, error) { return strings.Repeat("x", 5000), nil },
			want:    ErrBadReply, text: "reply longer than 1000 bytes"},
		{name: "never replying times out", fault: sockettest.FaultNeverReply, want: context.DeadlineExceeded, text: "waiting for the backend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sockettest.NewUnstartedServer(t, tt.handler)
			s.HugeSize = 4 << 20
			s.Start()
			s.SetFault(func(r sockettest.Request) sockettest.Fault {
				if strings.Contains(string(r.Params), "bad") {
					return tt.fault
				}
				return sockettest.FaultNone
			})
			c := newClient(t, s.Path, &Options{MaxReplySize: tt.max})
			// Only the hang needs a short timeout: under the race detector
			// on a busy machine, sending 4 MB can take longer than 200 ms.
			timeout := 10 * time.Second
			if tt.fault == sockettest.FaultNeverReply {
				timeout = 200 * time.Millisecond
			}
			_, err := c.Call(callCtx(t, timeout), "m", jsontext.Value(`{"bad":1}`), nil)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want %v containing %q", err, tt.want, tt.text)
			}
			if tt.handler != nil {
				return
			}
			// The pool recovers, on a new connection.
			echo(t, c, `{"good":2}`)
			if got := s.Accepted(); got != 2 {
				t.Errorf("%d connections accepted, want 2: the failed one must not be reused", got)
			}
		})
	}
}

// A backend that reads a request, acts on it and drops the connection
// before answering may have done the work: the call fails as a bad reply
// ("may or may not have happened") and the request is never sent again,
// however the kernel reports the drop. A streaming parser leaves the
// request's newline unread, which Linux reports as a reset rather than
// an end of file.
func TestARequestThatMayHaveBeenReadIsNeverSentAgain(t *testing.T) {
	tests := []struct {
		name      string
		streaming bool
		fault     sockettest.Fault
		warm      bool // an earlier call left a pooled connection
	}{
		{name: "closed with the newline unread, on a pooled connection", streaming: true, fault: sockettest.FaultCloseBeforeReply, warm: true},
		{name: "closed with the newline unread, on a new connection", streaming: true, fault: sockettest.FaultCloseBeforeReply},
		{name: "closed mid-reply with the newline unread", streaming: true, fault: sockettest.FaultCloseMidReply, warm: true},
		{name: "closed after reading the whole line, on a pooled connection", fault: sockettest.FaultCloseBeforeReply, warm: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sockettest.NewUnstartedServer(t, nil)
			s.StreamingParser = tt.streaming
			s.Start()
			s.SetFault(func(r sockettest.Request) sockettest.Fault {
				if string(r.Params) == `"act and crash"` {
					return tt.fault
				}
				return sockettest.FaultNone
			})
			c := newClient(t, s.Path, &Options{PoolSize: 1})
			if tt.warm {
				echo(t, c, `"first"`)
			}
			_, err := c.Call(callCtx(t, 5*time.Second), "m", jsontext.Value(`"act and crash"`), nil)
			if !errors.Is(err, ErrBadReply) {
				t.Errorf("err = %v, want ErrBadReply", err)
			}
			n := 0
			for _, r := range s.Requests() {
				if string(r.Params) == `"act and crash"` {
					n++
				}
			}
			if n != 1 {
				t.Errorf("the backend received the request %d times, want once", n)
			}
			echo(t, c, `"after"`)
		})
	}
}

// A backend that stops reading a pooled connection (shuts it down for
// reading) after its last reply makes the next write fail before any
// byte of the request goes out: the request is sent on a new connection.
func TestARequestThatNeverLeftIsSentAgain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux failing writes to a socket its peer shut down for reading")
	}
	var mu sync.Mutex
	accepted := 0
	path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
		mu.Lock()
		accepted++
		n := accepted
		mu.Unlock()
		if n == 1 {
			line, _ := r.ReadBytes('\n')
			c.CloseRead() // before the reply: the call after it finds it shut
			fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"result":"first"}`+"\n", requestID(line))
			r.ReadBytes('\n') // EOF at once, or when the client closes
			r.Peek(1)         // holds the connection open until the client goes
			return false
		}
		for answer(c, r, `"ok"`) {
		}
		return false
	})
	c := newClient(t, path, &Options{PoolSize: 1})
	echo(t, c, `"first"`)
	res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil)
	if err != nil || string(res) != `"ok"` {
		t.Errorf("second call = %s, %v; want it sent again", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 2 {
		t.Errorf("%d connections, want 2", accepted)
	}
}

// On a new connection, a write that fails before any byte goes out means
// the backend did not take the request: it is unavailable.
func TestARequestANewConnectionCannotSendIsUnavailable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux failing writes to a socket its peer shut down for reading")
	}
	shut, done := make(chan struct{}), make(chan struct{})
	path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
		c.CloseRead()
		close(shut)
		<-done
		return false
	})
	c := newClient(t, path, nil)
	cn, err := c.dial(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	<-shut // the request is written only now
	req, _ := requestLine(1, "m", nil)
	_, unsent, err := c.roundTrip(t.Context(), cn, 1, req, nil)
	close(done)
	if !unsent || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "closed the connection before the request was sent") {
		t.Errorf("roundTrip = unsent %v, %v; want unsent and ErrUnavailable", unsent, err)
	}
}

// Blank lines and \r\n line ends from the backend are not replies: they
// are skipped, before a reply and between replies, and the connection
// stays in use.
func TestBlankLinesFromTheBackendAreSkipped(t *testing.T) {
	tests := []struct {
		name   string
		before string // written before each reply
		end    string // the reply's line end
		after  string // written after each reply, separately
	}{
		{name: "a blank line before the reply", before: "\n", end: "\n"},
		{name: "a CRLF before the reply", before: "\r\n", end: "\n"},
		{name: "a reply ending in CRLF", end: "\r\n"},
		{name: "blank lines after the reply, in the same write", end: "\n\r\n \t\n"},
		{name: "a blank line after the reply, written later", end: "\n", after: "\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			conns := 0
			written := make(chan struct{}, 10)
			path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
				mu.Lock()
				conns++
				mu.Unlock()
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return false
					}
					if _, err := fmt.Fprintf(c, "%s{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"ok\"}%s", tt.before, requestID(line), tt.end); err != nil {
						return false
					}
					if tt.after != "" {
						if _, err := c.Write([]byte(tt.after)); err != nil {
							return false
						}
					}
					written <- struct{}{}
				}
			})
			c := newClient(t, path, &Options{PoolSize: 1})
			for i := range 3 {
				res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil)
				if err != nil || string(res) != `"ok"` {
					t.Fatalf("call %d = %s, %v; want \"ok\"", i, res, err)
				}
				<-written // the stray bytes are on their way before the next call
			}
			mu.Lock()
			defer mu.Unlock()
			if conns != 1 {
				t.Errorf("%d connections, want 1", conns)
			}
		})
	}
}

func TestWhatTheBackendSendsBesidesTheReply(t *testing.T) {
	tests := []struct {
		name         string
		before       string // written before the reply
		after        string // written after it
		wantAccepted int
	}{
		{name: "a notification before the reply is skipped", before: `{"jsonrpc":"2.0","method":"log","params":{}}` + "\n", wantAccepted: 1},
		{name: "anything after the reply drops the connection", after: `{"jsonrpc":"2.0","method":"log"}` + "\n", wantAccepted: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			conns := map[*net.UnixConn]bool{}
			path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
				mu.Lock()
				conns[c] = true
				mu.Unlock()
				line, err := r.ReadBytes('\n')
				if err != nil {
					return false
				}
				_, err = fmt.Fprintf(c, "%s{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":1}\n%s", tt.before, requestID(line), tt.after)
				return err == nil
			})
			c := newClient(t, path, nil)
			for range 2 {
				if res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil); err != nil || string(res) != "1" {
					t.Fatalf("Call = %s, %v", res, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(conns) != tt.wantAccepted {
				t.Errorf("%d connections, want %d", len(conns), tt.wantAccepted)
			}
		})
	}
}

// A reply is the answer to its request only: one with another id, such as
// a late duplicate of an earlier reply, fails the call, which is not sent
// again, and the connection is not used again.
func TestAReplyToAnotherIDIsABadReply(t *testing.T) {
	tests := []struct {
		name string
		id   string // the stray reply's id; "" for none
		text string
	}{
		{name: "the previous request's id", id: "1", text: "answered id 1 to request id 2"},
		{name: "a higher id", id: "3", text: "answered id 3 to request id 2"},
		{name: "an id beyond 64 bits", id: "99999999999999999999999", text: "answered id 99999999999999999999999"},
		{name: "a string id of the same number", id: `"2"`, text: `answered id "2"`},
		{name: "the same number written as a fraction", id: "2.0", text: "answered id 2.0"},
		{name: "a null id", id: "null", text: "answered id null"},
		{name: "no id", text: "answered no id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var ids []string
			conns := map[*net.UnixConn]bool{}
			path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return false
				}
				id := requestID(line)
				mu.Lock()
				ids = append(ids, string(id))
				conns[c] = true
				mu.Unlock()
				out := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":"ok"}`+"\n", id)
				if string(id) == "2" {
					member := ""
					if tt.id != "" {
						member = `"id":` + tt.id + ","
					}
					// One write, so the stray reply comes first whatever the timing.
					out = `{"jsonrpc":"2.0",` + member + `"result":"stray"}` + "\n" + out
				}
				_, err = c.Write([]byte(out))
				return err == nil
			})
			c := newClient(t, path, &Options{PoolSize: 1})
			echo(t, c, `"ok"`)
			_, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil)
			if !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want ErrBadReply containing %q", err, tt.text)
			}
			echo(t, c, `"ok"`)
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(ids) != "[1 2 3]" || len(conns) != 2 {
				t.Errorf("backend saw requests %v on %d connections, want [1 2 3] on 2", ids, len(conns))
			}
		})
	}
}

func TestALateReplyIsNeverReadByTheNextCall(t *testing.T) {
	release := make(chan struct{})
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		if string(r.Params) == `"slow"` {
			<-release // answers after the caller gave up, whatever ctx says
		}
		return r.Params, nil
	})
	c := newClient(t, s.Path, &Options{PoolSize: 1})
	_, err := c.Call(callCtx(t, 50*time.Millisecond), "m", jsontext.Value(`"slow"`), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	close(release) // the stale reply is written, or fails to be
	for i := range 3 {
		echo(t, c, fmt.Sprintf(`"fresh %d"`, i))
	}
	if got := s.Accepted(); got != 2 {
		t.Errorf("%d connections accepted, want 2", got)
	}
}

func TestCancellationReturnsPromptlyAndHangsUp(t *testing.T) {
	started, hungUp := make(chan struct{}), make(chan struct{})
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		if string(r.Params) == `"hang"` {
			close(started)
			<-ctx.Done() // the server's context ends when the client hangs up
			close(hungUp)
		}
		return r.Params, nil
	})
	c := newClient(t, s.Path, &Options{PoolSize: 1})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "m", jsontext.Value(`"hang"`), nil)
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	<-hungUp
	echo(t, c, `"next"`)
}

func TestADoneContextSendsNothing(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := newClient(t, s.Path, nil).Call(ctx, "m", nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if got := s.Accepted(); got != 0 {
		t.Errorf("%d connections made for a cancelled call", got)
	}
}

// A context's deadline bounds a call to a backend that never answers, and
// a wait for a free connection; the pool then serves the next calls, and a
// connection whose call had a deadline serves calls after it passed.
func TestDeadlines(t *testing.T) {
	started := make(chan struct{}, 1)
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		if string(r.Params) == `"hang"` {
			started <- struct{}{}
			<-ctx.Done()
		}
		return r.Params, nil
	})
	c := newClient(t, s.Path, &Options{PoolSize: 1})
	start := time.Now()
	_, err := c.Call(callCtx(t, 100*time.Millisecond), "m", jsontext.Value(`"hang"`), nil)
	<-started
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the backend") {
		t.Errorf("err = %v, want a timeout waiting for the backend", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timed out after %v, want about 100ms", d)
	}

	// The only connection is busy with a hung call: waiting for it ends
	// at the deadline too.
	hung := make(chan error, 1)
	go func() {
		_, err := c.Call(callCtx(t, 500*time.Millisecond), "m", jsontext.Value(`"hang"`), nil)
		hung <- err
	}()
	<-started
	_, err = c.Call(callCtx(t, 100*time.Millisecond), "m", jsontext.Value(`"next"`), nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "free backend connection") {
		t.Errorf("err = %v, want a timeout waiting for a connection", err)
	}
	if err := <-hung; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung call: err = %v, want a timeout", err)
	}

	ctx := callCtx(t, 200*time.Millisecond)
	if res, err := c.Call(ctx, "m", jsontext.Value(`"ok"`), nil); err != nil || string(res) != `"ok"` {
		t.Errorf("Call = %s, %v", res, err)
	}
	accepted := s.Accepted()
	<-ctx.Done()
	if res, err := c.Call(t.Context(), "m", jsontext.Value(`"later"`), nil); err != nil || string(res) != `"later"` {
		t.Errorf("Call on a connection whose last deadline passed = %s, %v", res, err)
	}
	if got := s.Accepted(); got != accepted {
		t.Errorf("%d connections accepted, want %d: the idle one must be reused", got, accepted)
	}
}

func TestBackendRestartIsTransparent(t *testing.T) {
	for _, how := range []string{"restart", "crash"} {
		t.Run(how, func(t *testing.T) {
			s := sockettest.NewServer(t, nil)
			c := newClient(t, s.Path, nil)
			echo(t, c, `{"before":1}`)
			if how == "restart" {
				s.Restart()
			} else {
				s.CloseClientConnections()
			}
			for i := range 3 {
				echo(t, c, fmt.Sprintf(`{"after":%d}`, i))
			}
			if got := len(s.Requests()); got != 4 {
				t.Errorf("backend got %d requests for 4 calls", got)
			}
		})
	}
}

func TestBackendDownThenUp(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	c := newClient(t, s.Path, nil)
	echo(t, c, `1`)
	s.Stop()
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("backend down: err = %v, want ErrUnavailable", err)
	}
	s.Start()
	echo(t, c, `2`)
}

// An idle connection is checked before use, so a backend that
// half-closed it (no more replies, though it still reads) never gets the
// request on it.
func TestIdleConnectionsAreCheckedBeforeUse(t *testing.T) {
	var mu sync.Mutex
	accepted := 0
	halfClosed := make(chan struct{})
	path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
		mu.Lock()
		accepted++
		n := accepted
		mu.Unlock()
		if n == 1 {
			answer(c, r, `"first"`)
			c.CloseWrite()
			close(halfClosed)
			r.ReadBytes('\n') // would swallow a request sent here
			return false
		}
		for answer(c, r, `"ok"`) {
		}
		return false
	})
	c := newClient(t, path, nil)
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	<-halfClosed
	if res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil); err != nil || string(res) != `"ok"` {
		t.Fatalf("call on a half-closed idle connection = %s, %v; want a new connection", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 2 {
		t.Errorf("%d connections, want 2", accepted)
	}
}

// barrier is a handler that holds every call until n are in the backend
// at once: calls finish only if they really run in parallel.
func barrier(n int) sockettest.Handler {
	var mu sync.Mutex
	in := 0
	all := make(chan struct{})
	return func(ctx context.Context, r sockettest.Request) (any, error) {
		mu.Lock()
		if in++; in == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
		}
		return r.Params, nil
	}
}

func TestPool(t *testing.T) {
	tests := []struct {
		name      string
		poolSize  int
		calls     int
		wantConns int
	}{
		{name: "connections never outnumber the pool", poolSize: 2, calls: 8, wantConns: 2},
		{name: "calls run in parallel up to the pool size", poolSize: 8, calls: 8, wantConns: 8},
		{name: "sequential calls share one connection", poolSize: 4, calls: 1, wantConns: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sockettest.NewServer(t, barrier(min(tt.poolSize, tt.calls)))
			c := newClient(t, s.Path, &Options{PoolSize: tt.poolSize})
			for range 3 { // the later rounds reuse the pooled connections
				var wg sync.WaitGroup
				for i := range tt.calls {
					wg.Go(func() { echo(t, c, fmt.Sprint(i)) })
				}
				wg.Wait()
			}
			if got := s.MaxConns(); got != tt.wantConns {
				t.Errorf("%d connections at once, want %d", got, tt.wantConns)
			}
			if got := s.Accepted(); got != tt.wantConns {
				t.Errorf("%d connections made, want %d", got, tt.wantConns)
			}
		})
	}
}

func TestClose(t *testing.T) {
	started := make(chan struct{})
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, nil
	})
	c := New(s.Path, &Options{PoolSize: 1})
	inFlight, waiting := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := c.Call(t.Context(), "m", nil, nil)
		inFlight <- err
	}()
	<-started
	go func() {
		_, err := c.Call(t.Context(), "m", nil, nil) // waits for the one connection
		waiting <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-inFlight; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight call: err = %v, want ErrClosed", err)
	}
	if err := <-waiting; !errors.Is(err, ErrClosed) {
		t.Errorf("waiting call: err = %v, want ErrClosed", err)
	}
	if _, err := c.Call(t.Context(), "m", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: err = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestAHugeReplyIsNotBuffered checks that a reply far over the limit costs
// about the limit in memory, not the reply's size.
func TestAHugeReplyIsNotBuffered(t *testing.T) {
	s := sockettest.NewUnstartedServer(t, nil)
	s.HugeSize = 64 << 20
	s.Start()
	s.SetFault(func(sockettest.Request) sockettest.Fault { return sockettest.FaultHugeReply })
	c := newClient(t, s.Path, &Options{MaxReplySize: 256 << 10})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrBadReply) {
		t.Fatalf("err = %v, want ErrBadReply", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("refusing a 64 MiB reply allocated %d KiB", got>>10)
	}
}

// A request larger than the socket's buffer is sent in parts; when the
// backend stops reading it, the call still ends at its deadline.
func TestALargeRequestTheBackendDoesNotReadTimesOut(t *testing.T) {
	path := filepath.Join(shortTempDir(t), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // accepted, never read
		}
	}()
	c := newClient(t, path, nil)
	params := jsontext.Value(`"` + strings.Repeat("x", 8<<20) + `"`)
	start := time.Now()
	_, err = c.Call(callCtx(t, 200*time.Millisecond), "m", params, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call took %v to time out after 200ms", d)
	}
}

func TestPeerChecks(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	t.Run("a socket of ours passes", func(t *testing.T) {
		echo(t, newClient(t, s.Path, nil), `1`)
	})
	t.Run("the backend process is ours", func(t *testing.T) {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: s.Path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		uid, err := PeerUID(c)
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil || uid != os.Getuid() {
			t.Errorf("PeerUID = %d, %v; want %d", uid, err, os.Getuid())
		}
	})
	t.Run("a socket of another user is refused unless any peer is allowed", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to give the socket to another user; checkOwner's own test covers the decision")
		}
		if err := os.Lchown(s.Path, 12345, 12345); err != nil {
			t.Skip(err)
		}
		_, err := newClient(t, s.Path, nil).Call(callCtx(t, 5*time.Second), "m", nil, nil)
		want := "backend unavailable at " + s.Path + ": socket is owned by uid 12345, not you (uid 0); refusing"
		if !errors.Is(err, ErrUnavailable) || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
		echo(t, newClient(t, s.Path, &Options{AllowAnyPeer: true}), `2`)
	})
}

func TestCheckPeerUID(t *testing.T) {
	if err := checkPeerUID(501, 501); err != nil {
		t.Errorf("same uid: %v", err)
	}
	err := checkPeerUID(0, 501)
	if want := "the backend process runs as uid 0, not you (uid 501); refusing"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// counting is a Call that counts what Grow is given, and fails once more
// than limit bytes are asked for (0: no limit).
type counting struct {
	mu    sync.Mutex
	grown int
	limit int
}

func (c *counting) Shrink(n int) {
	c.mu.Lock()
	c.grown -= n
	c.mu.Unlock()
}

func (c *counting) Notify(string, jsontext.Value) {}

func (c *counting) Request(context.Context, jsontext.Value, string, jsontext.Value) (jsontext.Value, error) {
	return nil, errors.New("no requests here")
}

func (c *counting) Grow(ctx context.Context, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit > 0 && c.grown+n > c.limit {
		return context.Canceled
	}
	c.grown += n
	return nil
}

// A reply is counted with its call's Grow as it is read, every byte of
// it; a call whose Grow fails stops reading, and its connection is not
// used again.
func TestAReplyIsCountedWithItsCall(t *testing.T) {
	result := `"` + strings.Repeat("x", 1<<20) + `"`
	srv := sockettest.NewServer(t, returns(result))
	c := newClient(t, srv.Path, nil)

	var all counting
	res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, &all)
	if err != nil || len(res) != len(result) {
		t.Fatalf("Call = %d bytes, %v; want the result", len(res), err)
	}
	if all.grown < len(result) || all.grown > len(result)+100 {
		t.Errorf("counted %d bytes of a reply of %d bytes and its envelope", all.grown, len(result))
	}

	short := counting{limit: 64 << 10}
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil, &short); err == nil {
		t.Fatal("a call whose Grow failed returned the result")
	}
	if short.grown > short.limit {
		t.Errorf("counted %d bytes past a limit of %d", short.grown, short.limit)
	}
	accepted := srv.Accepted()
	if res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil); err != nil || len(res) != len(result) {
		t.Fatalf("the next call: %d bytes, %v", len(res), err)
	}
	if srv.Accepted() != accepted+1 {
		t.Errorf("the connection of the failed read was used again")
	}
}
