package socketclient

import (
	"bufio"
	"context"
	"encoding/json"
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

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

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
	res, err := c.Call(callCtx(t, 5*time.Second), "echo", json.RawMessage(params))
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

func TestCall(t *testing.T) {
	big := `"` + strings.Repeat("é", 300<<10) + `"` // longer than the read buffer
	returnParamsWereNil := func(_ context.Context, r sockettest.Request) (any, error) { return r.Params == nil, nil }
	tests := []struct {
		name    string
		handler sockettest.Handler
		method  string
		params  string
		want    string
		wantErr error
	}{
		{name: "a result comes back byte for byte", params: `{"a": [1, 2.50, "é"], "b": 1e3}`, want: `{"a": [1, 2.50, "é"], "b": 1e3}`},
		{name: "a null result is a result", params: `null`, want: `null`},
		{name: "a result longer than the read buffer comes back whole", params: big, want: big},
		{name: "no params are sent as none", handler: returnParamsWereNil, params: ``, want: `true`},
		{name: "blank params are sent as none", handler: returnParamsWereNil, params: "  ", want: `true`},
		{name: "params with newlines are compacted", params: "{\n  \"a\": 1\n}", want: `{"a":1}`},
		{name: "the method name arrives unchanged", method: "we\"ird\\ \u00e9.method",
			handler: func(_ context.Context, r sockettest.Request) (any, error) { return r.Method, nil },
			want:    `"we\"ird\\ é.method"`},
		{name: "a backend error keeps code, message and data",
			handler: func(context.Context, sockettest.Request) (any, error) {
				return nil, &sockettest.Error{Code: -32011, Message: "Permission denied", Data: map[string]string{"reason": "no"}}
			},
			wantErr: &RPCError{Code: -32011, Message: "Permission denied", Data: json.RawMessage(`{"reason":"no"}`)}},
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
			res, err := c.Call(callCtx(t, 5*time.Second), method, json.RawMessage(tt.params))
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

func TestInvalidParamsWithANewlineAreNotSent(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	_, err := newClient(t, s.Path, nil).Call(callCtx(t, 5*time.Second), "m", json.RawMessage("{\n"))
	if err == nil || !strings.Contains(err.Error(), "params are not valid JSON") {
		t.Errorf("err = %v, want invalid params", err)
	}
	if got := s.Accepted(); got != 0 {
		t.Errorf("%d connections made for a request that cannot be sent", got)
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
		name  string
		setup func(t *testing.T) string // returns the socket path
		want  string                    // after the path
	}{
		{name: "a missing socket names the path and the reason", want: "connect: no such file or directory",
			setup: func(t *testing.T) string { return filepath.Join(shortTempDir(t), "none.sock") }},
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
		{name: "a stopped backend is missing", want: "connect: no such file or directory",
			setup: func(t *testing.T) string {
				s := sockettest.NewServer(t, nil)
				s.Stop()
				return s.Path
			}},
		{name: "a backend that hangs up without reading did not get the request", want: "the backend closed the connection without reading the request",
			setup: func(t *testing.T) string {
				return rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool { return false })
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t)
			_, err := newClient(t, path, nil).Call(callCtx(t, 5*time.Second), "m", nil)
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			if want := "backend unavailable at " + path + ": " + tt.want; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("err = %q, want it to start %q", err, want)
			}
		})
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

// answer reads one request line and answers it with result.
func answer(c *net.UnixConn, r *bufio.Reader, result string) bool {
	line, err := r.ReadBytes('\n')
	return err == nil && respond(c, line, result)
}

// respond answers the request line with result.
func respond(c *net.UnixConn, line []byte, result string) bool {
	var req struct{ ID json.RawMessage }
	json.Unmarshal(line, &req)
	_, err := fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
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
		{name: "garbage is a bad reply", fault: sockettest.FaultGarbage, want: ErrBadReply, text: "not a JSON object"},
		{name: "a wrong id is a bad reply", fault: sockettest.FaultWrongID, want: ErrBadReply, text: "answered id 2 to request id 1"},
		{name: "closing mid-reply is a bad reply", fault: sockettest.FaultCloseMidReply, want: ErrBadReply, text: "connection closed after"},
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
			_, err := c.Call(callCtx(t, timeout), "m", json.RawMessage(`{"bad":1}`))
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

func TestALateReplyIsNeverReadByTheNextCall(t *testing.T) {
	release := make(chan struct{})
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		if string(r.Params) == `"slow"` {
			<-release // answers after the caller gave up, whatever ctx says
		}
		return r.Params, nil
	})
	c := newClient(t, s.Path, &Options{PoolSize: 1})
	_, err := c.Call(callCtx(t, 50*time.Millisecond), "m", json.RawMessage(`"slow"`))
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
		_, err := c.Call(ctx, "m", json.RawMessage(`"hang"`))
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
	if _, err := newClient(t, s.Path, nil).Call(ctx, "m", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if got := s.Accepted(); got != 0 {
		t.Errorf("%d connections made for a cancelled call", got)
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
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("backend down: err = %v, want ErrUnavailable", err)
	}
	s.Start()
	echo(t, c, `2`)
}

// TestStaleConnection covers what an idle connection can meet on its
// next use when the backend dropped it just then (too late for the
// liveness check): a retry when the backend provably did not read the
// request, an error when it may have.
func TestStaleConnection(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux's errors for a peer that is gone")
	}
	tests := []struct {
		name string
		// first serves the first connection: it answers one request and
		// then drops the connection when the second comes, in its way.
		first        func(c *net.UnixConn, r *bufio.Reader, callDone <-chan struct{})
		wantErr      error
		wantAccepted int
	}{
		{name: "refusing further requests: sent again on a new connection",
			first: func(c *net.UnixConn, r *bufio.Reader, callDone <-chan struct{}) {
				line, _ := r.ReadBytes('\n')
				c.CloseRead() // the next write fails with EPIPE
				respond(c, line, `"ok"`)
				<-callDone
			},
			wantAccepted: 2},
		{name: "closed with the request unread: sent again on a new connection",
			first: func(c *net.UnixConn, r *bufio.Reader, _ <-chan struct{}) {
				answer(c, r, `"ok"`)
				waitReadable(c) // then closing resets the connection
			},
			wantAccepted: 2},
		{name: "closed after reading the request: not sent again",
			first: func(c *net.UnixConn, r *bufio.Reader, _ <-chan struct{}) {
				answer(c, r, `"ok"`)
				r.ReadBytes('\n')
			},
			wantErr:      ErrBadReply,
			wantAccepted: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callDone := make(chan struct{})
			var mu sync.Mutex
			accepted := 0
			path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
				mu.Lock()
				accepted++
				n := accepted
				mu.Unlock()
				if n == 1 {
					tt.first(c, r, callDone)
					return false
				}
				for answer(c, r, `"ok"`) {
				}
				return false
			})
			c := newClient(t, path, nil)
			if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil); err != nil {
				t.Fatal(err)
			}
			res, err := c.Call(callCtx(t, 5*time.Second), "m", nil)
			close(callDone)
			if !errors.Is(err, tt.wantErr) || err == nil && string(res) != `"ok"` {
				t.Errorf("second call = %s, %v; want %v", res, err, tt.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if accepted != tt.wantAccepted {
				t.Errorf("%d connections, want %d", accepted, tt.wantAccepted)
			}
		})
	}
}

// waitReadable waits until c has bytes to read, without reading them.
func waitReadable(c *net.UnixConn) {
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	var b [1]byte
	raw.Read(func(fd uintptr) bool {
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
		return err != unix.EAGAIN
	})
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
				var req struct{ ID json.RawMessage }
				json.Unmarshal(line, &req)
				_, err = fmt.Fprintf(c, "%s{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":1}\n%s", tt.before, req.ID, tt.after)
				return err == nil
			})
			c := newClient(t, path, nil)
			for range 2 {
				if res, err := c.Call(callCtx(t, 5*time.Second), "m", nil); err != nil || string(res) != "1" {
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

func TestWaitingForAConnectionHonoursTheContext(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		if string(r.Params) == `"hold"` {
			close(started)
			<-release
		}
		return r.Params, nil
	})
	c := newClient(t, s.Path, &Options{PoolSize: 1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		echo(t, c, `"hold"`)
	}()
	<-started
	_, err := c.Call(callCtx(t, 20*time.Millisecond), "m", nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for a free backend connection") {
		t.Errorf("err = %v, want a timeout waiting for a connection", err)
	}
	close(release)
	<-done
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
		_, err := c.Call(t.Context(), "m", nil)
		inFlight <- err
	}()
	<-started
	go func() {
		_, err := c.Call(t.Context(), "m", nil) // waits for the one connection
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
	if _, err := c.Call(t.Context(), "m", nil); !errors.Is(err, ErrClosed) {
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
	_, err := c.Call(callCtx(t, 5*time.Second), "m", nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrBadReply) {
		t.Fatalf("err = %v, want ErrBadReply", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("refusing a 64 MiB reply allocated %d KiB", got>>10)
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
		_, err := newClient(t, s.Path, nil).Call(callCtx(t, 5*time.Second), "m", nil)
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

// TestIdleConnectionsAreCheckedBeforeUse: a connection back from a call
// moments ago is reused unchecked (a closed one fails its write and is
// redialled, see TestBackendRestartIsTransparent), but one idle for
// longer than peekAfter is checked first, so a backend that half-closed
// it (no more replies, though it still reads) never gets the request on it.
func TestIdleConnectionsAreCheckedBeforeUse(t *testing.T) {
	var mu sync.Mutex
	accepted := 0
	path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
		mu.Lock()
		accepted++
		n := accepted
		mu.Unlock()
		if n == 1 {
			answer(c, r, `"first"`)
			c.CloseWrite()
			r.ReadBytes('\n') // would swallow a request sent here
			return false
		}
		for answer(c, r, `"ok"`) {
		}
		return false
	})
	c := newClient(t, path, nil)
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(peekAfter + 50*time.Millisecond)
	if res, err := c.Call(callCtx(t, 5*time.Second), "m", nil); err != nil || string(res) != `"ok"` {
		t.Fatalf("call on a half-closed idle connection = %s, %v; want a new connection", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 2 {
		t.Errorf("%d connections, want 2", accepted)
	}
}

// TestReadBufferGrowsForLongReplies: a connection starts with a small
// read buffer and gets the large one once a reply has outgrown it, so a
// pool of connections carrying small replies stays small while one
// carrying large replies parses them in place.
func TestReadBufferGrowsForLongReplies(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	c := newClient(t, s.Path, nil)
	sizes := func() (out []int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, cn := range c.idle {
			out = append(out, cn.r.Size())
		}
		return out
	}
	echo(t, c, `"small"`)
	if got := sizes(); len(got) != 1 || got[0] != smallReadBuffer {
		t.Fatalf("after a small reply: buffers %v, want [%d]", got, smallReadBuffer)
	}
	long := `"` + strings.Repeat("x", 2*smallReadBuffer) + `"`
	echo(t, c, long)
	if got := sizes(); len(got) != 1 || got[0] != largeReadBuffer {
		t.Fatalf("after a long reply: buffers %v, want [%d]", got, largeReadBuffer)
	}
	echo(t, c, long)
	echo(t, c, `"small again"`)
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
	params := json.RawMessage(`"` + strings.Repeat("x", 8<<20) + `"`)
	start := time.Now()
	_, err = c.Call(callCtx(t, 200*time.Millisecond), "m", params)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call took %v to time out after 200ms", d)
	}
}

// CallWithin bounds a call without a context deadline: a backend that
// never answers, and a wait for a connection, both end at the timeout,
// and the pool serves the next call.
func TestCallWithinTimesOut(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	s.SetFault(func(r sockettest.Request) sockettest.Fault {
		if strings.Contains(string(r.Params), "hang") {
			return sockettest.FaultNeverReply
		}
		return sockettest.FaultNone
	})
	c := newClient(t, s.Path, &Options{PoolSize: 1})
	start := time.Now()
	_, err := c.CallWithin(t.Context(), 100*time.Millisecond, "m", json.RawMessage(`"hang"`))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the backend") {
		t.Errorf("err = %v, want a timeout waiting for the backend", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timed out after %v, want about 100ms", d)
	}
	// The only connection is busy with a hung call: waiting for it ends
	// at the timeout too.
	hung := make(chan error, 1)
	go func() {
		_, err := c.CallWithin(t.Context(), 500*time.Millisecond, "m", json.RawMessage(`"hang"`))
		hung <- err
	}()
	time.Sleep(50 * time.Millisecond)
	start = time.Now()
	_, err = c.CallWithin(t.Context(), 100*time.Millisecond, "m", json.RawMessage(`"next"`))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "free backend connection") {
		t.Errorf("err = %v, want a timeout waiting for a connection", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 400*time.Millisecond {
		t.Errorf("waiting for a connection timed out after %v, want 100ms and at most a tick more", d)
	}
	if err := <-hung; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung call: err = %v, want a timeout", err)
	}
	// A connection that carried a deadline serves a call without one.
	if res, err := c.Call(t.Context(), "m", json.RawMessage(`"after"`)); err != nil || string(res) != `"after"` {
		t.Errorf("Call after timeouts = %s, %v", res, err)
	}
	res, err := c.CallWithin(t.Context(), 200*time.Millisecond, "m", json.RawMessage(`"ok"`))
	if err != nil || string(res) != `"ok"` {
		t.Errorf("CallWithin = %s, %v", res, err)
	}
	// Past that call's deadline, and long enough idle to be checked:
	// the connection is still good, and serves a call without a deadline.
	accepted := s.Accepted()
	time.Sleep(250 * time.Millisecond)
	if res, err := c.Call(t.Context(), "m", json.RawMessage(`"later"`)); err != nil || string(res) != `"later"` {
		t.Errorf("Call on a connection whose last deadline passed = %s, %v", res, err)
	}
	if got := s.Accepted(); got != accepted {
		t.Errorf("%d connections accepted, want %d: the idle one must be reused", got, accepted)
	}
}
