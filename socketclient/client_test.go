package socketclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

func echoServer(t *testing.T) *sockettest.Server {
	return sockettest.NewServer(t, sockettest.Echo)
}

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

func TestCallOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		handler sockettest.Handler
		params  string
		want    string
		check   func(t *testing.T, err error)
	}{
		{name: "a result comes back exactly as sent", handler: sockettest.Echo, params: `{"a": [1, 2.50, "é"]}`, want: `{"a": [1, 2.50, "é"]}`},
		{name: "a null result is a result", handler: func(context.Context, sockettest.Request) (any, error) { return json.RawMessage("null"), nil }, want: "null"},
		{name: "no params sends none", handler: func(_ context.Context, r sockettest.Request) (any, error) { return len(r.Params) == 0, nil }, want: "true"},
		{name: "a backend error keeps code, message and data", handler: func(context.Context, sockettest.Request) (any, error) {
			return nil, &sockettest.Error{Code: -32011, Message: "Permission denied", Data: map[string]string{"reason": "no"}}
		}, check: func(t *testing.T, err error) {
			var re *RPCError
			if !errors.As(err, &re) || re.Code != -32011 || re.Message != "Permission denied" || string(re.Data) != `{"reason":"no"}` {
				t.Errorf("err = %#v", err)
			}
			if err.Error() != "backend error -32011: Permission denied" {
				t.Errorf("message = %q", err.Error())
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sockettest.NewServer(t, tt.handler)
			c := newClient(t, s.Path, nil)
			res, err := c.Call(callCtx(t, 5*time.Second), "m.x", json.RawMessage(tt.params))
			if tt.check != nil {
				tt.check(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res) != tt.want {
				t.Errorf("result = %s, want %s", res, tt.want)
			}
		})
	}
}

func TestParamsWithNewlinesAreCompacted(t *testing.T) {
	s := echoServer(t)
	c := newClient(t, s.Path, nil)
	res, err := c.Call(callCtx(t, 5*time.Second), "echo", json.RawMessage("{\n  \"a\": 1\n}"))
	if err != nil || string(res) != `{"a":1}` {
		t.Errorf("Call = %s, %v", res, err)
	}
}

func TestMissingSocketIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.sock")
	c := newClient(t, path, nil)
	_, err := c.Call(callCtx(t, 5*time.Second), "m", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("err = %v", err)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault sockettest.Fault
		want  error
		text  string
	}{
		{"garbage", sockettest.FaultGarbage, ErrBadReply, "not a JSON-RPC message"},
		{"a wrong id", sockettest.FaultWrongID, ErrBadReply, "does not match"},
		{"closing mid-reply", sockettest.FaultCloseMidReply, ErrBadReply, "connection closed before the reply was complete"},
		{"closing before the reply", sockettest.FaultCloseBeforeReply, ErrBadReply, "connection closed"},
		{"a reply over the size limit", sockettest.FaultHugeReply, ErrBadReply, "reply larger than 1048576 bytes"},
		{"never replying", sockettest.FaultNeverReply, context.DeadlineExceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sockettest.NewUnstartedServer(t, sockettest.Echo)
			s.HugeSize = 4 << 20
			s.Start()
			c := newClient(t, s.Path, &Options{MaxReplySize: 1 << 20})
			s.SetFault(func(r sockettest.Request) sockettest.Fault {
				if strings.Contains(string(r.Params), "bad") {
					return tt.fault
				}
				return sockettest.FaultNone
			})
			_, err := c.Call(callCtx(t, 300*time.Millisecond), "m", json.RawMessage(`{"bad":1}`))
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want %v containing %q", err, tt.want, tt.text)
			}
			// The pool recovers: the next call gets its own reply.
			res, err := c.Call(callCtx(t, 5*time.Second), "m", json.RawMessage(`{"good":2}`))
			if err != nil || string(res) != `{"good":2}` {
				t.Errorf("next call = %s, %v", res, err)
			}
		})
	}
}

func TestCancellationReturnsPromptlyAndDropsTheConnection(t *testing.T) {
	s := echoServer(t)
	c := newClient(t, s.Path, &Options{PoolSize: 1})
	s.SetFault(func(r sockettest.Request) sockettest.Fault {
		if strings.Contains(string(r.Params), "hang") {
			return sockettest.FaultNeverReply
		}
		return sockettest.FaultNone
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "m", json.RawMessage(`{"hang":1}`))
		done <- err
	}()
	waitForRequests(t, s, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	// With a pool of one, the next call must use a new connection, not
	// the one a stale reply may still arrive on.
	res, err := c.Call(callCtx(t, 5*time.Second), "m", json.RawMessage(`{"n":2}`))
	if err != nil || string(res) != `{"n":2}` {
		t.Errorf("next call = %s, %v", res, err)
	}
}

func waitForRequests(t *testing.T, s *sockettest.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("backend got %d requests, want %d", len(s.Requests()), n)
		}
		time.Sleep(time.Millisecond) // polling another goroutine's state; no event to wait on
	}
}

func TestBackendRestartIsTransparent(t *testing.T) {
	for _, how := range []string{"restart", "crash"} {
		t.Run(how, func(t *testing.T) {
			s := echoServer(t)
			c := newClient(t, s.Path, nil)
			if _, err := c.Call(callCtx(t, 5*time.Second), "m", json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			if how == "restart" {
				s.Restart()
			} else {
				s.CloseClientConnections()
			}
			for i := range 3 {
				res, err := c.Call(callCtx(t, 5*time.Second), "m", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)))
				if err != nil || string(res) != fmt.Sprintf(`{"i":%d}`, i) {
					t.Errorf("call %d after %s = %s, %v", i, how, res, err)
				}
			}
		})
	}
}

func TestBackendDownThenUp(t *testing.T) {
	s := echoServer(t)
	c := newClient(t, s.Path, nil)
	s.Stop()
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("backend down: err = %v", err)
	}
	s.Start()
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", nil); err != nil {
		t.Errorf("backend up again: %v", err)
	}
}

func TestPoolBoundsAndParallelism(t *testing.T) {
	s := echoServer(t)
	s.SetDelay(20 * time.Millisecond)
	for _, size := range []int{2, 8} {
		c := New(s.Path, &Options{PoolSize: size})
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Call(callCtx(t, 10*time.Second), "m", json.RawMessage(fmt.Sprint(i))); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		c.Close()
		if got := s.MaxConns(); got > size && size == 2 {
			t.Errorf("pool of %d opened %d connections at once", size, got)
		}
	}
	if got := s.MaxConns(); got < 4 {
		t.Errorf("pool of 8 with 16 concurrent calls never had more than %d connections", got)
	}
}

func TestClose(t *testing.T) {
	s := echoServer(t)
	s.SetFault(func(sockettest.Request) sockettest.Fault { return sockettest.FaultNeverReply })
	c := New(s.Path, nil)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(t.Context(), "m", nil)
		done <- err
	}()
	waitForRequests(t, s, 1)
	c.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight call: err = %v, want ErrClosed", err)
	}
	if _, err := c.Call(t.Context(), "m", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: err = %v", err)
	}
}

func TestSocketOwnedByAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the socket to another user")
	}
	s := echoServer(t)
	if err := os.Lchown(s.Path, 12345, 12345); err != nil {
		t.Skip(err)
	}
	_, err := newClient(t, s.Path, nil).Call(callCtx(t, 5*time.Second), "m", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "owned by uid 12345") {
		t.Errorf("err = %v", err)
	}
	if _, err := newClient(t, s.Path, &Options{AllowAnyPeer: true}).Call(callCtx(t, 5*time.Second), "m", nil); err != nil {
		t.Errorf("AllowAnyPeer: %v", err)
	}
}

func TestPeerUIDIsOurs(t *testing.T) {
	s := echoServer(t)
	c := newClient(t, s.Path, nil)
	cn, err := c.dial(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer cn.c.Close()
	uid, err := PeerUID(cn.c)
	if err != nil || uid != os.Getuid() {
		t.Errorf("PeerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}

// TestConcurrentCallsNeverGetAnotherCallsReply hammers the pool with
// random faults: every call gets its own reply or an error, never another's.
func TestConcurrentCallsNeverGetAnotherCallsReply(t *testing.T) {
	s := echoServer(t)
	faults := []sockettest.Fault{sockettest.FaultGarbage, sockettest.FaultWrongID, sockettest.FaultCloseMidReply, sockettest.FaultCloseBeforeReply}
	s.SetFault(func(r sockettest.Request) sockettest.Fault {
		if rand.IntN(10) == 0 {
			return faults[rand.IntN(len(faults))]
		}
		return sockettest.FaultNone
	})
	c := newClient(t, s.Path, &Options{PoolSize: 8})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, failed := 0, 0
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				want := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				res, err := c.Call(callCtx(t, 5*time.Second), "m", json.RawMessage(want))
				mu.Lock()
				if err == nil {
					ok++
					if string(res) != want {
						t.Errorf("got %s, want %s", res, want)
					}
				} else {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok == 0 || failed == 0 {
		t.Errorf("ok %d, failed %d: the faults did not mix with successes", ok, failed)
	}
}

func FuzzParseReply(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32011,"message":"Permission denied","data":{"x":[1]}}}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":"1","result":1}`,
		`{"jsonrpc":"2.0","method":"log","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1}`,
		`this is not json`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":`,
		`{"jsonrpc":"2.0","id":1e999,"result":123456789012345678901234567890}`,
		`[{"jsonrpc":"2.0","id":1,"result":1}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := parseReply(line)
		if err != nil || r.notification {
			return
		}
		if (r.err == nil) == (r.result == nil) {
			t.Fatalf("parsed %q with result %q and error %v: want exactly one", line, r.result, r.err)
		}
		if r.result != nil && !json.Valid(r.result) {
			t.Fatalf("result %q is not valid JSON", r.result)
		}
	})
}
