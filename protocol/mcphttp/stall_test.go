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
