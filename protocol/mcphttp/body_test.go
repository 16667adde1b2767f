package mcphttp

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// heldBody returns a POST whose body says it is size bytes long and
// holds all of them but the last: a client that never finishes its body.
func heldBody(b *bridge, size int) []byte {
	start := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s%s",
		Path, b.ts.Listener.Addr(), size, start, strings.Repeat("x", size-1-len(start)))
}

// holdBody sends req, from heldBody, over a raw TCP connection the
// test's end closes.
func holdBody(t *testing.T, b *bridge, req []byte) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", b.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go conn.Write(req) // ends when written, or when the connection closes if the bridge stops reading
	return conn
}

// Bodies being read are counted against the byte budget as they are
// read: clients that never finish theirs hold half the total budget at
// most, and their first pieces, however much they send; another client's
// request is answered meanwhile; and once they go, a body larger than
// that half is read and answered.
func TestBodiesBeingReadHoldWhatTheBudgetAllows(t *testing.T) {
	// Not parallel: it measures the process's heap.
	// The oldest body and the first pieces aside, bodies being read take
	// half the budget: the other half has room for another's request.
	const total, holders, size = 4 << 20, 8, 1 << 20
	b := newBridge(t, Options{MaxBodySize: 4 << 20}, func(s *protocol.Server) { s.MaxHeldBytes, s.MaxTotalHeldBytes = total, total })
	c := b.modern(t)
	req := heldBody(b, size) // one for all: the test's own memory does not grow
	before := heapInUse()
	var conns []net.Conn
	for range holders { // 8 MiB offered, twice the budget
		conns = append(conns, holdBody(t, b, req))
	}
	// Each has sent what it will once the heap stops growing; the kernel
	// holds what the bridge does not read.
	var held int64
	for grown := true; grown; {
		time.Sleep(200 * time.Millisecond)
		now := int64(heapInUse()) - int64(before)
		grown, held = now > held+16<<10, max(held, now)
	}
	t.Logf("bodies being read hold %.1f MiB of the %d MiB offered", float64(held)/(1<<20), holders*size>>20)
	if bound := int64(total/2 + holders*bodyPiece + size + 512<<10); held > bound {
		t.Errorf("the bridge holds %d KiB for bodies never finished, past half its budget, their first pieces and the oldest (%d KiB)", held>>10, bound>>10)
	}
	if r := c.post(modern(2, "tools/call", `"name":"echo","arguments":{"x":"meanwhile"}`)); r.status != http.StatusOK {
		t.Errorf("another client's call: %d %s", r.status, r.body)
	}

	for _, conn := range conns {
		conn.Close()
	}
	large := `{"x":"` + strings.Repeat("l", 3*total/4) + `"}`
	if r := c.post(modern(3, "tools/call", `"name":"echo","arguments":`+large)); r.status != http.StatusOK || len(r.body) < len(large) {
		t.Errorf("a body larger than half the budget, alone: %d, %d bytes", r.status, len(r.body))
	}
}

// A body that waits for room in the budget longer than the server gives
// a request to be read is refused with 503, and its connection closed.
func TestABodyThatWaitsTooLongIsRefused(t *testing.T) {
	const total = 1 << 20
	inBubbleOn(t, &http.Server{ReadTimeout: 30 * time.Second}, Options{}, func(s *protocol.Server) { s.MaxHeldBytes, s.MaxTotalHeldBytes = total, total },
		func(t *testing.T, b *bridge) {
			older := b.srv.Reserve() // a body being read, older, that takes the half of the budget bodies get
			defer older.Release()
			if err := older.Grow(t.Context(), total/2); err != nil {
				t.Fatal(err)
			}
			c := b.modern(t)
			answered := make(chan *reply, 1)
			go func() { // ends when the request is answered
				answered <- c.post(modern(2, "tools/call", `"name":"echo","arguments":{"x":"`+strings.Repeat("w", 256<<10)+`"}`))
			}()
			synctest.Wait()
			select {
			case r := <-answered:
				t.Fatalf("answered while the budget had no room for its body: %d %s", r.status, r.body)
			default:
			}
			time.Sleep(30 * time.Second)
			r := <-answered
			if r.status != http.StatusServiceUnavailable || !r.close {
				t.Errorf("%d, closing %t, %s; want 503 and the connection closed", r.status, r.close, r.body)
			}
		})
}

// A body sent in chunks, its length not said, is read to its end, and
// refused with 413 past the limit.
func TestChunkedBodies(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{MaxBodySize: 200 << 10}, nil)
	c := b.modern(t)
	for _, tt := range []struct {
		name   string
		size   int
		status int
	}{
		{"smaller than a piece", 1 << 10, http.StatusOK},
		{"of several pieces", 150 << 10, http.StatusOK},
		{"past the limit", 300 << 10, http.StatusRequestEntityTooLarge},
	} {
		body := modern(2, "tools/call", `"name":"echo","arguments":{"x":"`+strings.Repeat("c", tt.size)+`"}`)
		req := c.request(t.Context(), http.MethodPost, body, nil)
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader(body)), -1 // chunked
		c.check.ClientLine([]byte(body))
		if r := c.send(req); r.status != tt.status || tt.status == http.StatusOK && len(r.body) < tt.size {
			t.Errorf("a chunked body %s: %d, %d bytes", tt.name, r.status, len(r.body))
		}
	}
}
