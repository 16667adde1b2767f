package mcphttp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawConn is a client's connection, opened by hand and kept open.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func dialRaw(t *testing.T, b *bridge) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", b.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, conn: conn, br: bufio.NewReader(conn)}
}

// get sends GET path on the connection and returns the response, its
// body read.
func (c *rawConn) get(path string) (*http.Response, string) {
	c.t.Helper()
	fmt.Fprintf(c.conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, c.conn.RemoteAddr())
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// Connections past MaxConnections get 503, with a JSON-RPC error, and
// are closed: connections are counted, not requests, and one that closes
// makes room for another.
func TestConnectionsPastTheLimitAreRefused(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{MaxConnections: 2}, nil)
	first, second := dialRaw(t, b), dialRaw(t, b)
	for i, c := range []*rawConn{first, first, second} { // two requests on the first: one connection
		if resp, body := c.get(HealthPath); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d within the limit: %d %s", i, resp.StatusCode, body)
		}
	}

	third := dialRaw(t, b)
	for _, path := range []string{Path, HealthPath} {
		if path == HealthPath {
			third = dialRaw(t, b)
		}
		resp, body := third.get(path)
		if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close || !strings.Contains(body, `"error":{"code":-32603,"message":"too many connections open`) {
			t.Errorf("GET %s on a connection past the limit: %d, closing %t, %s", path, resp.StatusCode, resp.Close, body)
		}
		if n, err := third.br.ReadByte(); err != io.EOF {
			t.Errorf("the refused connection is open: read %v, %v", n, err)
		}
		waitFor(t, b.closed, "the refused connection's end")
	}

	first.conn.Close()
	waitFor(t, b.closed, "the first connection's end")
	if resp, body := dialRaw(t, b).get(HealthPath); resp.StatusCode != http.StatusOK {
		t.Errorf("a connection once another closed: %d %s", resp.StatusCode, body)
	}
}

// Shutting down closes the connections that have sent no request yet:
// http.Server would otherwise wait 5 s for each before it counted it
// idle. One that is sending its request meanwhile is answered.
func TestShutdownClosesConnectionsThatSentNothing(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	silent := dialRaw(t, b)
	used := dialRaw(t, b)
	if resp, body := used.get(HealthPath); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) { // the server has seen both
		b.h.conns.mu.Lock()
		n := len(b.h.conns.open)
		b.h.conns.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections seen, want 2", n)
		}
	}
	// Well under the 5 s http.Server waits for a connection that sent
	// nothing: Shutdown must not need it.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if err := b.ts.Config.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown with a connection that sent nothing: %v", err)
	}
	if _, err := silent.br.ReadByte(); err == nil {
		t.Error("the silent connection is still open")
	}
}
