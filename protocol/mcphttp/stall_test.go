package mcphttp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// logLines is a zerolog writer that tells the test when a message is
// logged.
type logLines struct {
	mu    sync.Mutex
	lines []string
	wake  chan struct{}
}

func newLogLines() *logLines { return &logLines{wake: make(chan struct{}, 1)} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "")
}

// waitFor waits until a line holding s is logged.
func (l *logLines) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(l.String(), s) {
		select {
		case <-l.wake:
		case <-deadline:
			t.Fatalf("no log line with %q:\n%s", s, l)
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// stalledStream opens c's GET stream over a raw TCP connection that then
// reads nothing, as a client that stopped reading; the caller closes it.
func stalledStream(t *testing.T, b *bridge, c *client) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", b.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", Path, b.ts.Listener.Addr(), c.session)
	br := bufio.NewReaderSize(conn, 1<<10)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		conn.Close()
		t.Fatalf("GET: %v %v", resp, err)
	}
	return conn, br
}

// A client that stops reading its GET stream while large messages come
// costs the bridge no more than the session's budget (MaxHeldBytes; the
// server's is larger): what does not fit is dropped. The client is a
// real TCP connection that reads nothing.
func TestAStalledReaderCostsNoMoreThanItsSessionsBudget(t *testing.T) {
	// Not parallel: it measures the process's heap.
	logs := newLogLines()
	lg := zerolog.New(logs).Level(zerolog.DebugLevel)
	const budget = 2 << 20
	b := newBridge(t, Options{StallTimeout: time.Hour, Logger: &lg}, func(s *protocol.Server) {
		s.MaxHeldBytes, s.MaxTotalHeldBytes = budget, 256<<20
	})
	c := b.legacy(t, "2025-11-25")
	c.post(request(2, "logging/setLevel", `{"level":"error"}`))
	conn, _ := stalledStream(t, b, c)
	defer conn.Close()

	before := heapInUse()
	big := strings.Repeat("x", 1<<20)
	const offered = 32
	for range offered { // 32 MiB for a client that reads nothing
		b.srv.Log(protocol.LevelError, "test", big)
	}
	held := int64(heapInUse()) - int64(before)
	t.Logf("held %.1f MiB of the %d MiB offered", float64(held)/(1<<20), offered)
	if held > 4*budget {
		t.Errorf("the bridge holds %d MiB for a client that reads nothing, past 4× its session's %d MiB budget", held>>20, budget>>20)
	}
	conn.Close() // the client goes: so does its stream, and what it held
	logs.waitFor(t, "GET stream ended")
	if left := int64(heapInUse()) - int64(before); left > budget {
		t.Errorf("%d MiB still held after the client went", left>>20)
	}
}

// A client that stops reading loses its stream once a write stalls past
// StallTimeout: the connection closes, and the session goes on.
func TestAStalledReaderLosesItsStream(t *testing.T) {
	t.Parallel()
	logs := newLogLines()
	lg := zerolog.New(logs).Level(zerolog.DebugLevel)
	b := newBridge(t, Options{StallTimeout: 100 * time.Millisecond, Logger: &lg}, nil)
	c := b.legacy(t, "2025-11-25")
	c.post(request(2, "logging/setLevel", `{"level":"error"}`))
	conn, br := stalledStream(t, b, c)
	defer conn.Close()
	big := strings.Repeat("x", 1<<20)
	for range 32 { // more than the kernels' buffers hold: a write stalls
		b.srv.Log(protocol.LevelError, "test", big)
	}
	logs.waitFor(t, "GET stream ended")
	// Its connection closes: the client reads what the kernels hold,
	// then the end.
	waitFor(t, b.closed, "the stalled connection's end")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, br); err != nil && !isReset(err) {
		t.Errorf("reading the lost stream to its end: %v", err)
	}
	// The session lives on: it answers, and a new GET stream works.
	if r := c.post(request(3, "ping", "")); r.status != http.StatusOK {
		t.Errorf("ping after the stream was lost: %d %s", r.status, r.body)
	}
	s := c.open(http.MethodGet, "")
	b.srv.Log(protocol.LevelError, "test", "small")
	if ev := s.next(); !strings.Contains(ev, "small") {
		t.Errorf("the new stream got %s", ev)
	}
}

// isReset reports a connection the peer reset: the bridge may close a
// connection with unread data in its buffers.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// smallBuffers makes the kernel hold little of a response the client has
// not read: the send buffers of the connections ln accepts are 64 KiB,
// as are the receive buffers of slowClient's. Otherwise loopback's
// buffers, megabytes, would take most of a response whatever the client
// does.
func smallBuffers(ln net.Listener) net.Listener { return smallBufferListener{ln} }

type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}

// pacedReader reads from r no faster than rate bytes a second, 16 KiB at
// most at a time, as a client that reads steadily; a rate of 0 reads as
// fast as r gives.
type pacedReader struct {
	r     io.Reader
	rate  atomic.Int64
	start time.Time
	n     int64 // bytes read since start
}

func (p *pacedReader) Read(b []byte) (int, error) {
	rate := p.rate.Load()
	if rate > 0 {
		if p.start.IsZero() {
			p.start = time.Now()
		}
		b = b[:min(len(b), 16<<10)]
		time.Sleep(time.Until(p.start.Add(time.Duration(p.n * int64(time.Second) / rate)))) // keeps to the rate, not a synchronisation
	}
	k, err := p.r.Read(b)
	p.n += int64(k)
	return k, err
}

// slowClient sends req over a connection of its own with a small receive
// buffer and returns the response, its headers read; its body is read
// through the pacedReader, whose rate the caller sets. The test's end
// closes the connection.
func slowClient(t *testing.T, b *bridge, req *http.Request) (*http.Response, *pacedReader) {
	t.Helper()
	conn, err := net.Dial("tcp", b.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() }) // and so the response's body
	conn.(*net.TCPConn).SetReadBuffer(64 << 10)
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a bound on the test, never reached
	pr := &pacedReader{r: conn}
	resp, err := http.ReadResponse(bufio.NewReaderSize(pr, 16<<10), req)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return resp, pr
}

// answerSize is the size of the answers the steady readers read: large
// enough to take seconds at their rate, and many times what the kernel
// holds for them.
const answerSize = 3 << 20

// A client that reads steadily gets the whole of a response however long
// it takes, as JSON or as an event stream, in both eras: the stall
// timeout bounds the time to write each 64 KiB, not the whole response.
// Here 3 MiB at 1 MB/s take 3 s, three times the timeout.
func TestASteadyReaderGetsTheWholeResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		version string // "" for a modern request
		setup   string // a request sent first, when set
		body    string
		get     bool // the answer is an event on the GET stream, not the POST's response
		ctype   string
	}{
		{name: "a result as JSON, legacy", version: "2025-11-25", body: call(2, "big", fmt.Sprintf(`{"n":%d}`, answerSize)), ctype: "application/json"},
		{name: "a result as JSON, modern", body: modern(2, "tools/call", fmt.Sprintf(`"name":"big","arguments":{"n":%d}`, answerSize)), ctype: "application/json"},
		{name: "a batch's array", version: "2025-03-26",
			body:  "[" + call(2, "big", fmt.Sprintf(`{"n":%d}`, answerSize/2)) + "," + call(3, "big", fmt.Sprintf(`{"n":%d}`, answerSize/2)) + "]",
			ctype: "application/json"},
		{name: "a result after a log message, as an event stream", version: "2025-11-25", setup: request(9, "logging/setLevel", `{"level":"warning"}`),
			body: call(2, "big", fmt.Sprintf(`{"n":%d,"log":true}`, answerSize)), ctype: "text/event-stream"},
		{name: "a result after a log message, as an event stream, modern",
			body: strings.Replace(modern(2, "tools/call", fmt.Sprintf(`"name":"big","arguments":{"n":%d,"log":true}`, answerSize)),
				`"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"warning"`, 1),
			ctype: "text/event-stream"},
		{name: "a message on the GET stream", version: "2025-11-25", setup: request(9, "logging/setLevel", `{"level":"error"}`), get: true, ctype: "text/event-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBridgeOn(t, Options{StallTimeout: time.Second}, nil, smallBuffers)
			c := b.modern(t)
			if tt.version != "" {
				c = b.legacy(t, tt.version)
			}
			if tt.setup != "" {
				c.post(tt.setup)
			}
			var req *http.Request
			if tt.get {
				req = c.request(t.Context(), http.MethodGet, "", nil)
			} else {
				c.check.ClientLine([]byte(tt.body))
				req = c.request(t.Context(), http.MethodPost, tt.body, nil)
			}
			start := time.Now()
			resp, pr := slowClient(t, b, req)
			pr.rate.Store(1 << 20)
			if ct := mediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != tt.ctype {
				t.Fatalf("%d %s, want 200 %s", resp.StatusCode, ct, tt.ctype)
			}
			var got []byte
			var err error
			switch {
			case tt.get:
				b.srv.Log(protocol.LevelError, "test", strings.Repeat("x", answerSize))
				var ev string
				ev, err = newEvents(resp.Body).next()
				got = []byte(ev)
			case tt.ctype == "text/event-stream":
				var evs []string
				es := newEvents(resp.Body)
				for {
					ev, e := es.next()
					if e != nil {
						if e != io.EOF {
							err = e
						}
						break
					}
					evs = append(evs, ev)
				}
				if len(evs) != 2 || method(evs[0]) != "notifications/message" {
					t.Errorf("%d events, want a log message and the result", len(evs))
				}
				got = []byte(evs[len(evs)-1])
			default:
				got, err = io.ReadAll(resp.Body)
			}
			took := time.Since(start)
			if err != nil {
				t.Fatalf("the response was cut after %d bytes and %v: %v", len(got), took.Round(time.Millisecond), err)
			}
			if len(got) < answerSize {
				t.Fatalf("%d bytes, want the whole answer of more than %d", len(got), answerSize)
			}
			c.checkMessage(got, http.StatusOK)
			t.Logf("%d bytes in %v", len(got), took.Round(time.Millisecond))
		})
	}
}

// A client that reads less than 64 KiB per stall timeout, or stops, loses
// its response, JSON or event stream: the connection closes, and the
// client finds the response cut short.
func TestATricklingReaderLosesItsResponse(t *testing.T) {
	t.Parallel()
	const stall = 300 * time.Millisecond
	trickle := int64(16<<10) * int64(time.Second/stall)
	// A 2026-07-28 call whose request asks for log messages gets them on
	// its own response, an event stream, as a legacy one does.
	modernLog := strings.Replace(modern(2, "tools/call", fmt.Sprintf(`"name":"big","arguments":{"n":%d,"log":true}`, answerSize)),
		`"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"warning"`, 1)
	modernJSON := modern(2, "tools/call", fmt.Sprintf(`"name":"big","arguments":{"n":%d}`, answerSize))
	tests := []struct {
		name   string
		modern bool
		body   string
		rate   int64  // bytes a second; 0 reads nothing
		ended  string // what the bridge logs
	}{
		{"16 KiB per timeout, JSON", false, call(2, "big", fmt.Sprintf(`{"n":%d}`, answerSize)), trickle, "response not written"},
		{"16 KiB per timeout, an event stream", false, call(2, "big", fmt.Sprintf(`{"n":%d,"log":true}`, answerSize)), trickle, "event stream ended"},
		{"nothing, JSON", false, call(2, "big", fmt.Sprintf(`{"n":%d}`, answerSize)), 0, "response not written"},
		{"nothing, an event stream", false, call(2, "big", fmt.Sprintf(`{"n":%d,"log":true}`, answerSize)), 0, "event stream ended"},
		{"16 KiB per timeout, JSON, 2026-07-28", true, modernJSON, trickle, "response not written"},
		{"16 KiB per timeout, an event stream, 2026-07-28", true, modernLog, trickle, "event stream ended"},
		{"nothing, JSON, 2026-07-28", true, modernJSON, 0, "response not written"},
		{"nothing, an event stream, 2026-07-28", true, modernLog, 0, "event stream ended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs := newLogLines()
			lg := zerolog.New(logs).Level(zerolog.DebugLevel)
			b := newBridgeOn(t, Options{StallTimeout: stall, Logger: &lg}, nil, smallBuffers)
			c := b.modern(t)
			if !tt.modern {
				c = b.legacy(t, "2025-11-25")
				c.post(request(9, "logging/setLevel", `{"level":"warning"}`))
			}
			c.check.ClientLine([]byte(tt.body))
			resp, pr := slowClient(t, b, c.request(t.Context(), http.MethodPost, tt.body, nil))
			type result struct {
				n   int
				err error
			}
			read := func() <-chan result {
				done := make(chan result, 1)
				go func() { // ends with the response, cut or whole
					got, err := io.ReadAll(resp.Body)
					done <- result{len(got), err}
				}()
				return done
			}
			var done <-chan result
			if tt.rate > 0 {
				pr.rate.Store(tt.rate)
				done = read()
			}
			logs.waitFor(t, tt.ended)
			pr.rate.Store(0) // the rest, as fast as it comes
			if done == nil {
				done = read()
			}
			if r := waitFor(t, done, "the end of the response"); r.err == nil {
				t.Errorf("the whole response came (%d bytes)", r.n)
			}
		})
	}
}
