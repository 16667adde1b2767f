package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

const sentinel = `{"jsonrpc":"2.0","id":"sentinel","method":"backend.ping"}`

func TestFraming(t *testing.T) {
	ts := startServer(t, serverConfig{})
	tests := []struct {
		name string
		in   string
		want []string // response lines, in order; none for notifications
	}{
		{
			name: "a number id is echoed",
			in:   `{"jsonrpc":"2.0","id":7,"method":"backend.ping"}`,
			want: []string{`{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`},
		},
		{
			name: "a string id is echoed byte for byte",
			in:   `{"jsonrpc":"2.0","id":"a\u00e9<b>&","method":"backend.ping"}`,
			want: []string{`{"jsonrpc":"2.0","id":"a\u00e9<b>&","result":{"ok":true}}`},
		},
		{
			name: "a large or fractional number id is echoed as written",
			in:   `{"jsonrpc":"2.0","id":12345678901234567890.50,"method":"backend.ping"}`,
			want: []string{`{"jsonrpc":"2.0","id":12345678901234567890.50,"result":{"ok":true}}`},
		},
		{
			name: "a null id is answered with a null id",
			in:   `{"jsonrpc":"2.0","id":null,"method":"backend.ping"}`,
			want: []string{`{"jsonrpc":"2.0","id":null,"result":{"ok":true}}`},
		},
		{
			name: "null params count as none",
			in:   `{"jsonrpc":"2.0","id":1,"method":"backend.ping","params":null}`,
			want: []string{`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`},
		},
		{
			name: "whitespace around the message is fine",
			in:   "  \t{ \"jsonrpc\" : \"2.0\", \"id\" : 1 , \"method\" : \"backend.ping\" }  ",
			want: []string{`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`},
		},
		{
			name: "a notification gets no reply",
			in:   `{"jsonrpc":"2.0","method":"backend.ping"}`,
		},
		{
			name: "a notification of an unknown method gets no reply either",
			in:   `{"jsonrpc":"2.0","method":"no.such.method","params":{}}`,
		},
		{
			name: "a blank line is skipped",
			in:   "   ",
		},
		{
			name: "invalid JSON is a parse error with a null id",
			in:   `{"jsonrpc":"2.0","id":1,"method":`,
			want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not valid JSON"}}`},
		},
		{
			name: "a message that is not an object is an invalid request",
			in:   `42`,
			want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a request must be a JSON object"}}`},
		},
		{
			name: "a wrong jsonrpc version is an invalid request",
			in:   `{"jsonrpc":"1.0","id":3,"method":"backend.ping"}`,
			want: []string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: jsonrpc must be \"2.0\""}}`},
		},
		{
			name: "a missing method is an invalid request",
			in:   `{"jsonrpc":"2.0","id":4}`,
			want: []string{`{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: method must be a non-empty string"}}`},
		},
		{
			name: "an object id is an invalid request with a null id",
			in:   `{"jsonrpc":"2.0","id":{"a":1},"method":"backend.ping"}`,
			want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string, a number or null"}}`},
		},
		{
			name: "scalar params are an invalid request",
			in:   `{"jsonrpc":"2.0","id":5,"method":"echo","params":"x"}`,
			want: []string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: params must be an object or an array"}}`},
		},
		{
			name: "an unknown method is method not found",
			in:   `{"jsonrpc":"2.0","id":6,"method":"no.such.method"}`,
			want: []string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"method not found: no.such.method"}}`},
		},
		{
			name: "array params where an object is needed are invalid params",
			in:   `{"jsonrpc":"2.0","id":7,"method":"notes.get","params":["abc"]}`,
			want: []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: params must be an object"}}`},
		},
		{
			name: "a batch is answered with an array, in order, without entries for notifications",
			in:   `[{"jsonrpc":"2.0","id":1,"method":"backend.ping"},{"jsonrpc":"2.0","method":"backend.ping"},1,{"jsonrpc":"2.0","id":"two","method":"echo","params":[1,2]}]`,
			want: []string{`[{"jsonrpc":"2.0","id":1,"result":{"ok":true}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a request must be a JSON object"}},{"jsonrpc":"2.0","id":"two","result":{"params":[1,2]}}]`},
		},
		{
			name: "a batch of notifications gets no reply",
			in:   `[{"jsonrpc":"2.0","method":"backend.ping"},{"jsonrpc":"2.0","method":"echo"}]`,
		},
		{
			name: "an empty batch is one invalid request error",
			in:   `[]`,
			want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`},
		},
		{
			name: "a broken batch is a parse error",
			in:   `[{"jsonrpc":"2.0","id":1,"method":"backend.ping"},`,
			want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not valid JSON"}}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ts.dial(t)
			// The sentinel's reply marks the end of the case's replies:
			// the connection answers in order.
			c.send(tt.in, sentinel)
			var got []string
			for {
				line := c.recv()
				if line == `{"jsonrpc":"2.0","id":"sentinel","result":{"ok":true}}` {
					break
				}
				got = append(got, line)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("replies:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestRequestsOnOneConnectionAreAnsweredInOrder(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	// Were the connection served concurrently, the quick requests would
	// overtake the slow one.
	c.send(
		`{"jsonrpc":"2.0","id":1,"method":"debug.sleep","params":{"ms":50}}`,
		`{"jsonrpc":"2.0","id":2,"method":"backend.ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"n":3}}`,
	)
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"slept_ms":50}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"ok":true}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"params":{"n":3}}}`,
	} {
		if got := c.recv(); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestShutdownInterruptsSlowRequestsAndRemovesTheSocket(t *testing.T) {
	sleeping := make(chan struct{}, 1)
	ts := startServer(t, serverConfig{tweak: func(s *server) {
		s.d.onHandle = func(method string) {
			if method == "debug.sleep" {
				sleeping <- struct{}{}
			}
		}
	}})
	slow := ts.dial(t)
	slow.send(`{"jsonrpc":"2.0","id":"slow","method":"debug.sleep","params":{"ms":600000}}`)
	<-sleeping

	// Another connection is served while the first one is busy.
	if r := result[map[string]bool](t, ts.dial(t), "backend.ping", nil); !r["ok"] {
		t.Errorf("ping: %v", r)
	}

	idle := ts.dial(t)
	result[map[string]bool](t, idle, "backend.ping", nil) // now it is surely accepted
	start := time.Now()
	ts.stop(t)
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown took %v", d)
	}

	line := slow.recv()
	if !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":"slow","error":{"code":-32000,"message":"interrupted: the backend is shutting down","data":{"slept_ms":`) {
		t.Errorf("slow request got %s", line)
	}
	for name, c := range map[string]*client{"busy": slow, "idle": idle} {
		if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("%s connection after shutdown: %v, want EOF", name, err)
		}
	}
	if _, err := os.Lstat(ts.path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after shutdown: %v, want it removed", err)
	}
}

func TestSocketIsPrivate(t *testing.T) {
	ts := startServer(t, serverConfig{})
	fi, err := os.Lstat(ts.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}
}

func TestListen(t *testing.T) {
	log := zerolog.Nop()
	d := &dispatcher{methods: map[string]handler{}, log: log}

	t.Run("a stale socket is replaced", func(t *testing.T) {
		path := filepath.Join(shortTempDir(t), "s.sock")
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close() // leaves the file behind, as a crash would
		s, err := listen(path, d, log)
		if err != nil {
			t.Fatalf("listen over a stale socket: %v", err)
		}
		s.ln.Close()
	})

	t.Run("a live socket is left alone", func(t *testing.T) {
		path := filepath.Join(shortTempDir(t), "s.sock")
		s, err := listen(path, d, log)
		if err != nil {
			t.Fatal(err)
		}
		defer s.ln.Close()
		_, err = listen(path, d, log)
		if err == nil || !strings.Contains(err.Error(), "another backend is listening on "+path) {
			t.Errorf("second listen: %v, want another backend is listening", err)
		}
		if c, err := net.Dial("unix", path); err != nil {
			t.Errorf("first server no longer reachable: %v", err)
		} else {
			c.Close()
		}
	})

	t.Run("a file that is not a socket is left alone", func(t *testing.T) {
		path := filepath.Join(shortTempDir(t), "s.sock")
		if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := listen(path, d, log); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Errorf("listen: %v, want not a socket", err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "keep me" {
			t.Errorf("file changed: %q, %v", b, err)
		}
	})
}

func TestPeerWithAnotherUIDIsDisconnected(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no peer credentials on " + runtime.GOOS)
	}
	ts := startServer(t, serverConfig{tweak: func(s *server) { s.uid = os.Getuid() + 1 }})
	c := ts.dial(t)
	c.c.Write([]byte(sentinel + "\n")) // may fail: the server may have hung up already
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	// The server hangs up with the request unread, so the kernel may
	// report a reset rather than an end of file.
	if b, err := c.r.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read from rejected connection: %q, %v; want EOF or a reset", b, err)
	}
}

// logLines is a log writer that hands each line to the test.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

func TestRun(t *testing.T) {
	sock := filepath.Join(shortTempDir(t), "sub", "s.sock")
	opts := &options{socket: sock, dataDir: t.TempDir(), filesRoot: t.TempDir()}
	lines := make(logLines, 100)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, opts, zerolog.New(lines).Level(zerolog.InfoLevel), time.Second) }()

	if first := <-lines; !strings.Contains(first, `"message":"listening"`) || !strings.Contains(first, `"socket":"`+sock+`"`) {
		t.Fatalf("first log line %s, want listening with the socket", first)
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket folder: %v %v, want 0700", fi.Mode(), err)
	}
	c := (&testServer{path: sock}).dial(t)
	if r := result[map[string]bool](t, c, "backend.ping", nil); !r["ok"] {
		t.Errorf("ping: %v", r)
	}

	// A second backend on the same socket refuses to start.
	err := run(t.Context(), opts, zerolog.Nop(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "another backend is listening") {
		t.Errorf("second run: %v", err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after run: %v, want it removed", err)
	}
}

func TestParseFlags(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{
			name: "defaults live under ~/.tairseach",
			want: options{
				socket:    filepath.Join(home, ".tairseach", "tairseach.sock"),
				dataDir:   filepath.Join(home, ".tairseach", "example-data"),
				filesRoot: home,
				logLevel:  "info",
			},
		},
		{
			name: "every flag can be set",
			args: []string{"-socket", "/tmp/x.sock", "-data", "~/d", "-files-root", "/srv", "-log-level", "debug"},
			want: options{socket: "/tmp/x.sock", dataDir: filepath.Join(home, "d"), filesRoot: "/srv", logLevel: "debug"},
		},
		{name: "an unknown log level is an error", args: []string{"-log-level", "loud"}, wantErr: true},
		{name: "an unknown flag is an error", args: []string{"-port", "1"}, wantErr: true},
		{name: "a positional argument is an error", args: []string{"serve"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr {
				if err == nil {
					t.Errorf("parseFlags(%q) = %+v, want an error", tt.args, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.want {
				t.Errorf("parseFlags(%q) = %+v, want %+v", tt.args, *got, tt.want)
			}
		})
	}
	if code := mainExit([]string{"-h"}, io.Discard); code != 0 {
		t.Errorf("-h exits %d, want 0", code)
	}
	if code := mainExit([]string{"-log-level", "loud"}, io.Discard); code != 2 {
		t.Errorf("bad flag exits %d, want 2", code)
	}
}

// Shutdown ends within its grace period (and a short wait after it)
// whatever a call is doing, even one that ignores its context.
func TestShutdownDoesNotWaitForAHungCall(t *testing.T) {
	hung, started := make(chan struct{}), make(chan struct{})
	ts := startServer(t, serverConfig{tweak: func(s *server) {
		s.d.methods["test.hang"] = func(context.Context, json.RawMessage, *peer) (any, error) {
			close(started)
			<-hung
			return nil, nil
		}
	}})
	t.Cleanup(func() { close(hung) }) // before stop, which runs after it
	c := ts.dial(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.hang"}`)
	<-started
	ts.cancel()
	select {
	case <-ts.done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return within 10s of shutdown (grace 2s)")
	}
	close(ts.done) // stop need not wait again
}
