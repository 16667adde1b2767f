package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// testServer is a backend served in-process on a short temporary socket
// path (Unix socket paths are limited to about 104 bytes).
type testServer struct {
	path    string
	dataDir string
	root    string
	srv     *server
	cancel  context.CancelFunc
	done    chan error
}

type serverConfig struct {
	dataDir string // default: a new temporary folder
	root    string // default: a new temporary folder
	// tweak, when set, adjusts the server before it serves.
	tweak func(*server)
}

func testLogger(t testing.TB) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
}

func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "eb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startServer serves a backend until the test ends (or stop is called).
func startServer(t *testing.T, cfg serverConfig) *testServer {
	t.Helper()
	if cfg.dataDir == "" {
		cfg.dataDir = t.TempDir()
	}
	if cfg.root == "" {
		cfg.root = t.TempDir()
	}
	log := testLogger(t)
	b, err := newBackend(cfg.dataDir, cfg.root, log)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shortTempDir(t), "s.sock")
	srv, err := listen(path, &dispatcher{methods: b.methods(), log: log}, log)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.tweak != nil {
		cfg.tweak(srv)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{path: path, dataDir: cfg.dataDir, root: cfg.root, srv: srv, cancel: cancel, done: make(chan error, 1)}
	// Owned by the test: stop waits for it.
	go func() { ts.done <- srv.serve(ctx, 2*time.Second) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop shuts the server down and waits for serve to return; it may be
// called more than once.
func (ts *testServer) stop(t testing.TB) {
	t.Helper()
	ts.cancel()
	if err, ok := <-ts.done; ok {
		close(ts.done)
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

// client is one connection to a test server.
type client struct {
	t      testing.TB
	c      net.Conn
	r      *bufio.Reader
	nextID atomic.Int64
}

func (ts *testServer) dial(t testing.TB) *client {
	t.Helper()
	c, err := net.Dial("unix", ts.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, r: bufio.NewReader(c)}
}

// send writes lines, each followed by a newline, in one write.
func (c *client) send(lines ...string) {
	c.t.Helper()
	if _, err := c.c.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// recv reads one response line (without its newline).
func (c *client) recv() string {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("recv: %v (partial %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

// reply is a decoded response.
type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// call sends one request and returns its response, skipping the
// notifications sent before it. params is marshalled
// unless it is a string, which is sent as raw JSON.
func (c *client) call(method string, params any) reply {
	c.t.Helper()
	raw, ok := params.(string)
	if !ok {
		b, err := json.Marshal(params)
		if err != nil {
			c.t.Fatal(err)
		}
		raw = string(b)
	}
	id := c.nextID.Add(1)
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, id, method)
	if params != nil {
		req += `,"params":` + raw
	}
	c.send(req + "}")
	line := c.recv()
	for strings.HasPrefix(line, `{"jsonrpc":"2.0","method":`) {
		line = c.recv() // a notification during the call (progress): not the response
	}
	var r reply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		c.t.Fatalf("response %s: %v", line, err)
	}
	if string(r.ID) != fmt.Sprint(id) {
		c.t.Fatalf("response id %s, want %d: %s", r.ID, id, line)
	}
	return r
}

// result calls method, fails the test on an error response, and decodes
// the result into a new T.
func result[T any](t testing.TB, c *client, method string, params any) T {
	t.Helper()
	r := c.call(method, params)
	if r.Error != nil {
		t.Fatalf("%s: error %d %q %s", method, r.Error.Code, r.Error.Message, r.Error.Data)
	}
	var v T
	if err := json.Unmarshal(r.Result, &v); err != nil {
		t.Fatalf("%s: result %s: %v", method, r.Result, err)
	}
	return v
}

// wantError calls method and checks the error code and that the message
// contains msg.
func wantError(t testing.TB, c *client, method string, params any, code int, msg string) reply {
	t.Helper()
	r := c.call(method, params)
	if r.Error == nil {
		t.Fatalf("%s(%v): result %s, want error %d", method, params, r.Result, code)
	}
	if r.Error.Code != code || !strings.Contains(r.Error.Message, msg) {
		t.Fatalf("%s(%v): error %d %q, want %d containing %q", method, params, r.Error.Code, r.Error.Message, code, msg)
	}
	return r
}

// The client's side of a call that speaks: the test plays tairseach-mcp,
// which reads the backend's notifications and requests before its reply
// and answers the requests on the same connection.

// message is one line from the backend: a notification, a request of its
// own, or the reply.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	reply
}

// exchanged is what the backend sent during one call: its notifications
// and requests, in order, and its reply.
type exchanged struct {
	notified []message
	asked    []message
	reply    reply
}

// answerer answers one request of the backend's: with a result
// (marshalled), or with an error object when err is set.
type answerer func(q message) (result any, err *rpcError)

// request sends one request and returns its id.
func (c *client) request(method string, params any) int64 {
	c.t.Helper()
	raw, ok := params.(string)
	if !ok {
		b, err := json.Marshal(params)
		if err != nil {
			c.t.Fatal(err)
		}
		raw = string(b)
	}
	id := c.nextID.Add(1)
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, id, method)
	if params != nil {
		req += `,"params":` + raw
	}
	c.send(req + "}")
	return id
}

// next reads one line from the backend as a message.
func (c *client) next() message {
	c.t.Helper()
	line := c.recv()
	var m message
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		c.t.Fatalf("line %s: %v", line, err)
	}
	return m
}

// answer answers the backend's request q.
func (c *client) answer(q message, result any, e *rpcError) {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": q.ID}
	if e != nil {
		msg["error"] = e
	} else {
		msg["result"] = result
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(string(b))
}

// exchange calls method, answering each request of the backend's with
// answer (nil: a request fails the test), and returns what the backend
// sent until its reply.
func (c *client) exchange(method string, params any, answer answerer) exchanged {
	c.t.Helper()
	id := c.request(method, params)
	var x exchanged
	for {
		m := c.next()
		switch {
		case m.Method != "" && m.ID != nil:
			x.asked = append(x.asked, m)
			if answer == nil {
				c.t.Fatalf("%s: the backend asked %s %s", method, m.Method, m.Params)
			}
			res, e := answer(m)
			c.answer(m, res, e)
		case m.Method != "":
			x.notified = append(x.notified, m)
		default:
			if string(m.ID) != fmt.Sprint(id) {
				c.t.Fatalf("reply id %s, want %d", m.ID, id)
			}
			x.reply = m.reply
			return x
		}
	}
}

// exchangeResult is exchange for a call that must succeed: its result is
// decoded into a new T.
func exchangeResult[T any](t testing.TB, c *client, method string, params any, answer answerer) (T, exchanged) {
	t.Helper()
	x := c.exchange(method, params, answer)
	if x.reply.Error != nil {
		t.Fatalf("%s: error %d %q %s", method, x.reply.Error.Code, x.reply.Error.Message, x.reply.Error.Data)
	}
	var v T
	if err := json.Unmarshal(x.reply.Result, &v); err != nil {
		t.Fatalf("%s: result %s: %v", method, x.reply.Result, err)
	}
	return v, x
}

// Answers of a client that can be asked everything.
func sampled(text string) map[string]any {
	return map[string]any{"role": "assistant", "content": map[string]string{"type": "text", "text": text}, "model": "test-model", "stopReason": "endTurn"}
}

func accepted(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

var testRoots = map[string]any{"roots": []any{map[string]string{"uri": "file:///home/ann/notes", "name": "notes"}}}

// anything answers every question as a willing client and user would.
func anything(q message) (any, *rpcError) {
	switch q.Method {
	case "sampling/createMessage":
		return sampled("A short summary."), nil
	case "elicitation/create":
		return accepted(map[string]any{"label": "shopping", "name": "Alice", "context": "tests", "color": "blue"}), nil
	case "roots/list":
		return testRoots, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "no such method: " + q.Method}
}

// missing answers as the bridge does for a client that did not declare
// what the question needs.
func missing(q message) (any, *rpcError) {
	capability := map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}[q.Method]
	return nil, &rpcError{Code: codeMissingCapability, Message: "the client did not declare the capability " + q.Method + " needs",
		Data: map[string]any{"requiredCapabilities": map[string]any{capability: map[string]any{}}}}
}

// returning wraps method's handler so that the test learns when it
// returns, and with what error.
func returning(method string, returned chan<- error) func(*server) {
	return func(s *server) {
		h := s.d.methods[method]
		s.d.methods[method] = func(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
			res, err := h(ctx, params, p)
			returned <- err
			return res, err
		}
	}
}

func waitReturned(t *testing.T, returned <-chan error) error {
	t.Helper()
	select {
	case err := <-returned:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not return within 10s")
		return nil
	}
}
