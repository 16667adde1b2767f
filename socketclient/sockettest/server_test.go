package sockettest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// client is a raw connection to a Server.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, s *sockettest.Server) *client {
	t.Helper()
	c, err := net.Dial("unix", s.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A safety net so that a broken server fails the test instead of
	// hanging it; nothing waits on this timer.
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *client) send(lines ...string) {
	c.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(c.c, l+"\n"); err != nil {
			c.t.Fatal(err)
		}
	}
}

func (c *client) line() string {
	c.t.Helper()
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read: %v (after %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

// rest reads until the server closes the connection.
func (c *client) rest() (string, error) {
	b, err := io.ReadAll(c.r)
	return string(b), err
}

func TestAnswers(t *testing.T) {
	denied := func(context.Context, sockettest.Request) (any, error) {
		return nil, &sockettest.Error{Code: -32011, Message: "Permission denied", Data: map[string]string{"reason": "no"}}
	}
	tests := []struct {
		name    string
		handler sockettest.Handler
		send    []string
		want    []string
	}{
		{name: "a request is answered with its id exactly as sent",
			send: []string{`{"jsonrpc":"2.0","id":"a b","method":"m","params":[1, 2]}`, `{"jsonrpc":"2.0","id":1e3,"method":"m","params":{}}`},
			want: []string{`{"jsonrpc":"2.0","id":"a b","result":[1, 2]}`, `{"jsonrpc":"2.0","id":1e3,"result":{}}`}},
		{name: "a request without params echoes null",
			send: []string{`{"jsonrpc":"2.0","id":1,"method":"m"}`},
			want: []string{`{"jsonrpc":"2.0","id":1,"result":null}`}},
		{name: "a notification gets no answer",
			send: []string{`{"jsonrpc":"2.0","method":"n","params":[0]}`, `{"jsonrpc":"2.0","id":2,"method":"m","params":[2]}`},
			want: []string{`{"jsonrpc":"2.0","id":2,"result":[2]}`}},
		{name: "a batch is answered with an array without the notifications",
			send: []string{`[{"jsonrpc":"2.0","id":1,"method":"m","params":[1]},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"m","params":[2]}]`},
			want: []string{`[{"jsonrpc":"2.0","id":1,"result":[1]},{"jsonrpc":"2.0","id":2,"result":[2]}]`}},
		{name: "a batch of notifications gets no answer",
			send: []string{`[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"n"}]`, `{"jsonrpc":"2.0","id":3,"method":"m","params":[3]}`},
			want: []string{`{"jsonrpc":"2.0","id":3,"result":[3]}`}},
		{name: "a batch answers its malformed members with errors",
			send: []string{`[5,{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}]`},
			want: []string{`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}},{"jsonrpc":"2.0","id":1,"result":[1]}]`}},
		{name: "an empty batch is an invalid request",
			send: []string{`[]`},
			want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`}},
		{name: "a line that is not JSON is a parse error",
			send: []string{`{"jsonrpc":"2.0","id":1,`},
			want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`}},
		{name: "a message without a method is an invalid request",
			send: []string{`{"jsonrpc":"2.0","id":4,"method":7}`},
			want: []string{`{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request"}}`}},
		{name: "a handler's Error is sent with its code, message and data", handler: denied,
			send: []string{`{"jsonrpc":"2.0","id":5,"method":"m"}`},
			want: []string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32011,"message":"Permission denied","data":{"reason":"no"}}}`}},
		{name: "any other handler error is an internal error",
			handler: func(context.Context, sockettest.Request) (any, error) { return nil, errors.New("boom") },
			send:    []string{`{"jsonrpc":"2.0","id":6,"method":"m"}`},
			want:    []string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"boom"}}`}},
		{name: "a result is marshalled, map keys sorted",
			handler: func(context.Context, sockettest.Request) (any, error) {
				return map[string]int{"b": 2, "a": 1, "c": 3}, nil
			},
			send: []string{`{"jsonrpc":"2.0","id":7,"method":"m"}`},
			want: []string{`{"jsonrpc":"2.0","id":7,"result":{"a":1,"b":2,"c":3}}`}},
		{name: "a raw result is sent as it is",
			handler: func(context.Context, sockettest.Request) (any, error) {
				return jsontext.Value(`{ "a" : "\u00e9" }`), nil
			},
			send: []string{`{"jsonrpc":"2.0","id":8,"method":"m"}`},
			want: []string{`{"jsonrpc":"2.0","id":8,"result":{ "a" : "\u00e9" }}`}},
		{name: "a raw result with newlines is compacted to stay one line",
			handler: func(context.Context, sockettest.Request) (any, error) { return jsontext.Value("{\n \"a\": 1\n}"), nil },
			send:    []string{`{"jsonrpc":"2.0","id":8,"method":"m"}`},
			want:    []string{`{"jsonrpc":"2.0","id":8,"result":{"a":1}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, sockettest.NewServer(t, tt.handler))
			c.send(tt.send...)
			var got []string
			for range tt.want {
				got = append(got, c.line())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestsAreRecordedInArrivalOrder(t *testing.T) {
	for _, noRecord := range []bool{false, true} {
		s := sockettest.NewUnstartedServer(t, nil)
		s.NoRecord = noRecord
		s.Start()
		c := dial(t, s)
		c.send(`{"jsonrpc":"2.0","method":"first"}`,
			`[{"jsonrpc":"2.0","id":"b","method":"second","params":{"x": 1}},{"jsonrpc":"2.0","id":3,"method":"third","params":[]}]`,
			`not json`)
		c.line() // the batch's answer
		c.line() // the parse error: by now every request was read
		var want []sockettest.Request
		if !noRecord {
			want = []sockettest.Request{
				{Method: "first"},
				{ID: jsontext.Value(`"b"`), Method: "second", Params: jsontext.Value(`{"x": 1}`)},
				{ID: jsontext.Value(`3`), Method: "third", Params: jsontext.Value(`[]`)},
			}
		}
		if diff := cmp.Diff(want, s.Requests()); diff != "" {
			t.Errorf("NoRecord %v: requests (-want +got):\n%s", noRecord, diff)
		}
	}
}

func TestOneConnectionIsServedInOrderUnlessConcurrent(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		t.Run(map[bool]string{false: "sequential", true: "concurrent"}[concurrent], func(t *testing.T) {
			firstMayEnd, secondDone := make(chan struct{}), make(chan struct{})
			s := sockettest.NewUnstartedServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
				switch r.Method {
				case "first":
					if concurrent {
						<-secondDone // deadlocks unless the second runs meanwhile
					} else {
						<-firstMayEnd
					}
				case "second":
					if !concurrent {
						select {
						case <-firstMayEnd:
						default:
							t.Error("the second request ran while the first was being answered")
						}
					}
					close(secondDone)
				}
				return r.Method, nil
			})
			s.Concurrent = concurrent
			s.Start()
			c := dial(t, s)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"first"}`, `{"jsonrpc":"2.0","id":2,"method":"second"}`)
			if !concurrent {
				close(firstMayEnd)
			}
			want := []string{`{"jsonrpc":"2.0","id":1,"result":"first"}`, `{"jsonrpc":"2.0","id":2,"result":"second"}`}
			got := []string{c.line(), c.line()}
			if concurrent {
				// Both finished, so they ran at once; the second's answer
				// usually comes first, but nothing orders the writes.
				slices.Sort(got)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	const req = `{"jsonrpc":"2.0","id":7,"method":"m","params":{"k":"v"}}`
	const answer = `{"jsonrpc":"2.0","id":7,"result":{"k":"v"}}`
	tests := []struct {
		fault sockettest.Fault
		check func(t *testing.T, s *sockettest.Server, c *client)
	}{
		{sockettest.FaultGarbage, func(t *testing.T, s *sockettest.Server, c *client) {
			if got := c.line(); got != "this is not json" {
				t.Errorf("got %q", got)
			}
		}},
		{sockettest.FaultWrongID, func(t *testing.T, s *sockettest.Server, c *client) {
			if got, want := c.line(), `{"jsonrpc":"2.0","id":8,"result":{"k":"v"}}`; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		}},
		{sockettest.FaultCloseMidReply, func(t *testing.T, s *sockettest.Server, c *client) {
			got, err := c.rest()
			if err != nil || got != answer[:(len(answer)+1)/2] {
				t.Errorf("got %q, %v; want the first half of %s", got, err, answer)
			}
		}},
		{sockettest.FaultCloseBeforeReply, func(t *testing.T, s *sockettest.Server, c *client) {
			if got, err := c.rest(); got != "" || err != nil {
				t.Errorf("got %q, %v; want nothing", got, err)
			}
		}},
		{sockettest.FaultHugeReply, func(t *testing.T, s *sockettest.Server, c *client) {
			got := c.line()
			var r struct {
				ID     int    `json:"id"`
				Result string `json:"result"`
			}
			if len(got)+1 != s.HugeSize || json.Unmarshal([]byte(got), &r) != nil || r.ID != 7 {
				t.Errorf("got a %d-byte line starting %.40q; want %d bytes of JSON for id 7", len(got)+1, got, s.HugeSize)
			}
		}},
		{sockettest.FaultNeverReply, func(t *testing.T, s *sockettest.Server, c *client) {
			s.CloseClientConnections() // the request was read (the fault was chosen)
			if got, err := c.rest(); got != "" || err != nil {
				t.Errorf("got %q, %v; want nothing", got, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			s := sockettest.NewUnstartedServer(t, nil)
			s.HugeSize = 1 << 20
			s.Start()
			chosen := make(chan struct{})
			s.SetFault(func(sockettest.Request) sockettest.Fault { close(chosen); return tt.fault })
			c := dial(t, s)
			c.send(req)
			<-chosen
			tt.check(t, s, c)
		})
	}
}

func TestWrongIDOfAStringID(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	s.SetFault(func(sockettest.Request) sockettest.Fault { return sockettest.FaultWrongID })
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":"x","method":"m"}`)
	if got, want := c.line(), `{"jsonrpc":"2.0","id":"not-your-id","result":null}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestHandlerContextEndsWhenTheClientHangsUp(t *testing.T) {
	started, ended := make(chan struct{}), make(chan struct{})
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		close(started)
		<-ctx.Done()
		close(ended)
		return nil, ctx.Err()
	})
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	<-started
	c.c.Close()
	<-ended
}

func TestADelayDoesNotHoldUpClose(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	s.SetDelay(time.Hour)
	read := make(chan struct{})
	s.SetFault(func(sockettest.Request) sockettest.Fault { close(read); return sockettest.FaultNone })
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	<-read
	s.Close() // returns only if the delay gives way
	if got, err := c.rest(); got != "" || err != nil {
		t.Errorf("got %q, %v; want the connection closed without an answer", got, err)
	}
}

func TestCrashStopAndRestart(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	roundTrip := func(c *client) {
		t.Helper()
		c.send(`{"jsonrpc":"2.0","id":1,"method":"m","params":1}`)
		if got := c.line(); got != `{"jsonrpc":"2.0","id":1,"result":1}` {
			t.Fatalf("got %s", got)
		}
	}
	c := dial(t, s)
	roundTrip(c)

	s.CloseClientConnections()
	if got, err := c.rest(); got != "" || err != nil {
		t.Errorf("after CloseClientConnections: read %q, %v; want EOF", got, err)
	}
	roundTrip(dial(t, s)) // still listening

	c = dial(t, s)
	roundTrip(c) // accepted, not waiting in the listen queue
	s.Stop()
	if _, err := net.Dial("unix", s.Path); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("dial while stopped: %v, want no socket", err)
	}
	if got, err := c.rest(); got != "" || err != nil {
		t.Errorf("after Stop: read %q, %v; want EOF", got, err)
	}

	s.Restart()
	roundTrip(dial(t, s))
	if got := len(s.Requests()); got != 4 {
		t.Errorf("%d requests recorded across restarts, want 4", got)
	}
}

func TestConnectionCounts(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	var cs []*client
	for range 3 {
		c := dial(t, s)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
		c.line() // the server has accepted c
		cs = append(cs, c)
	}
	if got := s.MaxConns(); got != 3 {
		t.Errorf("MaxConns = %d, want 3", got)
	}
	for _, c := range cs {
		c.c.Close()
	}
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	c.line()
	if got := s.Accepted(); got != 4 {
		t.Errorf("Accepted = %d, want 4", got)
	}
}

func TestSocketIsPrivateAndShort(t *testing.T) {
	s := sockettest.NewServer(t, nil)
	fi, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want a socket with 0600", fi.Mode())
	}
	if len(s.Path) > 100 {
		t.Errorf("path %q is too long for a Unix socket", s.Path)
	}
}

func TestCloseWaitsForHandlersAndIsIdempotent(t *testing.T) {
	var mu sync.Mutex
	running := 0
	started := make(chan struct{})
	s := sockettest.NewServer(t, func(ctx context.Context, r sockettest.Request) (any, error) {
		mu.Lock()
		running++
		mu.Unlock()
		close(started)
		<-ctx.Done()
		mu.Lock()
		running--
		mu.Unlock()
		return nil, nil
	})
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	<-started
	s.Close()
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	if running != 0 {
		t.Errorf("%d handlers still running after Close", running)
	}
}

// A streaming parser reads each request up to the end of its JSON value:
// requests are answered as usual, but a fault that closes the connection
// leaves the request's newline unread, which Linux reports to the client
// as a reset.
func TestStreamingParser(t *testing.T) {
	s := sockettest.NewUnstartedServer(t, nil)
	s.StreamingParser = true
	s.Start()
	s.SetFault(func(r sockettest.Request) sockettest.Fault {
		if r.Method == "crash" {
			return sockettest.FaultCloseBeforeReply
		}
		return sockettest.FaultNone
	})
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`+"\r\n", `[{"jsonrpc":"2.0","id":2,"method":"m","params":[2]}]`)
	want := []string{`{"jsonrpc":"2.0","id":1,"result":[1]}`, `[{"jsonrpc":"2.0","id":2,"result":[2]}]`}
	if diff := cmp.Diff(want, []string{c.line(), c.line()}); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"crash"}`)
	got, err := c.rest()
	if got != "" || err == nil && runtime.GOOS == "linux" {
		t.Errorf("after a crash with the newline unread: read %q, %v; want a reset", got, err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests recorded, want 3: the crashing one was read", n)
	}
}
