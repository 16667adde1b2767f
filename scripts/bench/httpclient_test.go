package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHTTPConnReadsWhatNetHTTPWrites runs requests over one httpConn to a
// net/http server answering as the servers measured do: JSON of a known
// length, an event stream in chunks, 202 and 204 without a body, and a
// body large enough to be chunked.
func TestHTTPConnReadsWhatNetHTTPWrites(t *testing.T) {
	t.Parallel()
	large := strings.Repeat("x", 100<<10)
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch string(body) {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
		case "events":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "event: message\r\ndata:{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\n\r\n")
		case "accepted":
			w.WriteHeader(http.StatusAccepted)
		case "large":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, large)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := dialHTTP(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	tests := []struct {
		method, body string
		wantSession  bool
		status       int
		session      string
		eventStream  bool
		message      string
	}{
		{"POST", "json", true, 200, "s1", false, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"POST", "json", false, 200, "", false, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"POST", "events", false, 200, "", true, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"POST", "accepted", false, 202, "", false, ""},
		{"POST", "large", false, 200, "", false, large},
		{"DELETE", "", false, 204, "", false, ""},
		{"POST", "json", false, 200, "", false, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	}
	for i, tt := range tests {
		var body []byte
		if tt.method == "POST" {
			body = []byte(tt.body)
		}
		resp, err := c.do(tt.method, "/mcp", postHeader, body, tt.wantSession)
		if err != nil {
			t.Fatalf("%d, %s %q: %v", i, tt.method, tt.body, err)
		}
		if resp.status != tt.status || resp.sessionID != tt.session || resp.eventStream != tt.eventStream || string(resp.message()) != tt.message {
			t.Errorf("%d, %s %q: status %d, session %q, event stream %v, message %.80q; want %d, %q, %v, %.80q", i, tt.method, tt.body,
				resp.status, resp.sessionID, resp.eventStream, resp.message(), tt.status, tt.session, tt.eventStream, tt.message)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want every request on one", n)
	}
}

// TestHTTPConnRefusesWhatItCannotRead gives httpConn responses it must not
// take for answers.
func TestHTTPConnRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, response string }{
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n"},
		{"a status that is not a number", "HTTP/1.1 2x0 OK\r\n\r\n"},
		{"a header line without a colon", "HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\n{}"},
		{"a bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"},
		{"no length and no chunks", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}"},
		{"a bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"},
		{"a chunk longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{}\r\n0\r\n\r\n"},
		{"a body cut short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}"},
		{"chunks cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n"},
		{"nothing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newHTTPConn(&scriptedConn{r: strings.NewReader(tt.response)}, "localhost")
			if resp, err := c.do("POST", "/mcp", postHeader, []byte("{}"), false); err == nil {
				t.Errorf("read %d %q, want an error", resp.status, resp.body)
			}
		})
	}
	t.Run("a connection the server closes", func(t *testing.T) {
		t.Parallel()
		c := newHTTPConn(&scriptedConn{r: strings.NewReader("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")}, "localhost")
		if _, err := c.do("POST", "/mcp", postHeader, []byte("{}"), false); err != nil {
			t.Fatal(err)
		}
		if _, err := c.do("POST", "/mcp", postHeader, []byte("{}"), false); err == nil {
			t.Error("a request after Connection: close went out")
		}
	})
}

// TestHTTPConnWritesOneRequest checks the bytes of a request: its line,
// Host, the header lines given, the body's length and the body.
func TestHTTPConnWritesOneRequest(t *testing.T) {
	t.Parallel()
	conn := &scriptedConn{r: strings.NewReader("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")}
	c := newHTTPConn(conn, "127.0.0.1:8411")
	if _, err := c.do("POST", "/mcp", "A: b\r\n", []byte(`{"x":1}`), false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.do("DELETE", "/mcp", "Mcp-Session-Id: s\r\n", nil, false); err != nil {
		t.Fatal(err)
	}
	want := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8411\r\nA: b\r\nContent-Length: 7\r\n\r\n{\"x\":1}" +
		"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:8411\r\nMcp-Session-Id: s\r\n\r\n"
	if got := conn.w.String(); got != want {
		t.Errorf("wrote\n%q\nwant\n%q", got, want)
	}
}

// TestHTTPClientChecks runs a client's checks of a tools/call response
// over canned responses: the bridge's JSON, the go-sdk's event stream, and
// each way a response can be wrong.
func TestHTTPClientChecks(t *testing.T) {
	t.Parallel()
	const args = `{"data":"aaa"}`
	result := `"result":{"content":[{"type":"text","text":"{\"echo\":{\"data\":\"aaa\"}}"}],"structuredContent":{"echo":{"data":"aaa"}}}`
	asJSON := func(status, message string) string {
		return "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(message)) + "\r\n\r\n" + message
	}
	asEvents := func(message string) string {
		events := "event: message\ndata: " + message + "\n\n"
		return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(events)), 16) + "\r\n" + events + "\r\n0\r\n\r\n"
	}
	tests := []struct {
		name, response string
		ok             bool
	}{
		{"as tairseach-mcp answers", asJSON("200 OK", `{"jsonrpc":"2.0","id":1,`+result+`}`), true},
		{"as the go-sdk answers", asEvents(`{"jsonrpc":"2.0","id":1,` + result + `}`), true},
		{"answering another id", asJSON("200 OK", `{"jsonrpc":"2.0","id":2,`+result+`}`), false},
		{"as an error result", asJSON("200 OK", `{"jsonrpc":"2.0","id":1,`+strings.Replace(result, `"result":{`, `"result":{"isError":true,`, 1)+`}`), false},
		{"with another echo", asEvents(`{"jsonrpc":"2.0","id":1,` + strings.ReplaceAll(result, "aaa", "aab") + `}`), false},
		{"as a JSON-RPC error", asJSON("200 OK", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}`), false},
		{"with status 404", asJSON("404 Not Found", `{"jsonrpc":"2.0","id":1,`+result+`}`), false},
		{"as an event stream without the response", asEvents(`{"jsonrpc":"2.0","method":"notifications/progress"}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cl := &httpClient{c: newHTTPConn(&scriptedConn{r: strings.NewReader(tt.response)}, "localhost"), args: args}
			ok, err := cl.call()
			if err != nil || ok != tt.ok {
				t.Errorf("call: %v, %v; want %v", ok, err, tt.ok)
			}
		})
	}
}

// TestConcurrentlyMakesNCalls checks that the callers make n calls in all,
// that failed checks are counted, and that a failed call stops them all.
func TestConcurrentlyMakesNCalls(t *testing.T) {
	t.Parallel()
	var made atomic.Int64
	var callers []func() (bool, error)
	for range 7 {
		callers = append(callers, func() (bool, error) { return made.Add(1)%10 != 0, nil })
	}
	var lat []time.Duration
	errs, err := concurrently(callers, 1000, &lat)
	if err != nil || errs != 100 || len(lat) != 1000 || made.Load() != 1000 {
		t.Errorf("%d calls, %d latencies, %d failed checks, %v; want 1000, 1000, 100, nil", made.Load(), len(lat), errs, err)
	}

	failed := errors.New("connection reset")
	var once sync.Once
	for i := range callers {
		callers[i] = func() (bool, error) {
			err := error(nil)
			once.Do(func() { err = failed })
			return true, err
		}
	}
	if _, err := concurrently(callers, 1_000_000, &lat); !errors.Is(err, failed) {
		t.Errorf("after a failed call: %v, want %v", err, failed)
	}
}

// scriptedConn is a connection that reads r and keeps what is written.
type scriptedConn struct {
	net.Conn
	r io.Reader
	w bytes.Buffer
}

func (c *scriptedConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *scriptedConn) Write(b []byte) (int, error)      { return c.w.Write(b) }
func (c *scriptedConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptedConn) Close() error                     { return nil }
func (c *scriptedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptedConn) SetWriteDeadline(time.Time) error { return nil }

// TestStopTakesTheSignalAsAnExit checks that a server that ends by SIGTERM
// itself, as perf record does when the bench profiles the bridge through
// a wrapper, is stopped cleanly, and that one that exits with a failure
// is not.
func TestStopTakesTheSignalAsAnExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script string
		clean        bool
	}{
		{"ended by the signal", "exec sleep 60", true},
		{"exiting 0", `trap "exit 0" TERM; echo ready; while :; do sleep 0.05; done`, true},
		{"exiting 3", `trap "exit 3" TERM; echo ready; while :; do sleep 0.05; done`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("sh", "-c", tt.script)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tt.script != "exec sleep 60" {
				// The trap is set once the shell says so.
				if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
					t.Fatal(err)
				}
			}
			s := &httpServer{cmd: cmd, logged: make(chan struct{})}
			close(s.logged)
			if err := s.stop(); (err == nil) != tt.clean {
				t.Errorf("stop: %v, want clean %v", err, tt.clean)
			}
		})
	}
}
