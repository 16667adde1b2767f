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
