// Package sockettest runs fake Tairseach backends for tests, the way
// net/http/httptest runs fake HTTP servers: NewServer listens on a fresh
// Unix socket, answers with a handler, records every request, and has
// knobs for the ways a real backend misbehaves (delay, never replying,
// garbage, a wrong id, closing mid-reply, an enormous reply) and for
// crashes and restarts.
package sockettest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Request is one request the server received.
type Request struct {
	ID     json.RawMessage // as sent; nil for notifications
	Method string
	Params json.RawMessage
}

// Error makes a handler answer with a JSON-RPC error.
type Error struct {
	Code    int64
	Message string
	Data    any
}

func (e *Error) Error() string { return e.Message }

// Handler answers one request: a result (json.RawMessage is sent as it
// is, anything else is encoded), or an error (an *Error is sent as that
// JSON-RPC error, any other as -32603).
type Handler func(ctx context.Context, req Request) (result any, err error)

// Echo answers every request with its params.
func Echo(_ context.Context, req Request) (any, error) {
	if len(req.Params) == 0 {
		return json.RawMessage("null"), nil
	}
	return req.Params, nil
}

// Fault is a way to misbehave on one request.
type Fault int

// Faults.
const (
	FaultNone             Fault = iota
	FaultNeverReply             // read the request, never answer (until Close)
	FaultGarbage                // answer a line that is not JSON
	FaultWrongID                // answer with another id
	FaultCloseMidReply          // write half a reply, then close the connection
	FaultCloseBeforeReply       // close the connection without answering
	FaultHugeReply              // answer a line of HugeSize bytes
)

// Server is a fake backend. Set its exported fields before Start (or use
// NewServer for the defaults); Fault and Delay may also be changed while
// it runs, under SetFault / SetDelay.
type Server struct {
	// Path is the socket path.
	Path string
	// Concurrent makes the server answer pipelined requests of one
	// connection concurrently; by default it answers one at a time per
	// connection, like the real backend.
	Concurrent bool
	// HugeSize is the size of a FaultHugeReply line (default 64 MiB).
	HugeSize int

	handler Handler
	dir     string

	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
	requests []Request
	delay    time.Duration
	fault    func(Request) Fault
	active   int
	maxConns int

	ctx    context.Context // cancelled by Close: ends delays and never-replies
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// NewServer starts a server that answers with h and is closed when the
// test ends.
func NewServer(tb testing.TB, h Handler) *Server {
	tb.Helper()
	s := NewUnstartedServer(tb, h)
	s.Start()
	return s
}

// NewUnstartedServer returns a server to configure before Start.
func NewUnstartedServer(tb testing.TB, h Handler) *Server {
	tb.Helper()
	// Socket paths are limited to about 104 bytes: t.TempDir is too deep.
	dir, err := os.MkdirTemp("", "st")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Path: filepath.Join(dir, "backend.sock"), handler: h, dir: dir, conns: map[net.Conn]struct{}{}, HugeSize: 64 << 20}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	tb.Cleanup(func() {
		s.Close()
		os.RemoveAll(dir)
	})
	return s
}

// Start starts listening.
func (s *Server) Start() {
	if err := s.listen(); err != nil {
		panic("sockettest: " + err.Error())
	}
}

func (s *Server) listen() error {
	os.Remove(s.Path)
	ln, err := net.Listen("unix", s.Path)
	if err != nil {
		return err
	}
	os.Chmod(s.Path, 0o600)
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	s.wg.Add(1)
	// The accept loop ends when the listener is closed (Stop, Restart, Close).
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				c.Close()
				return
			}
			s.conns[c] = struct{}{}
			s.active++
			s.maxConns = max(s.maxConns, s.active)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }() // ends when c is closed
		}
	}()
	return nil
}

// SetDelay makes every answer wait d.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// SetFault chooses a fault per request; nil means none.
func (s *Server) SetFault(f func(Request) Fault) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MaxConns returns the most connections that were open at once.
func (s *Server) MaxConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxConns
}

// CloseClientConnections closes every open connection, as a crash would,
// and keeps listening.
func (s *Server) CloseClientConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// Stop takes the backend down: no listener, no connections, no socket.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	os.Remove(s.Path)
}

// Restart simulates a backend restart: Stop, then listen again on Path.
func (s *Server) Restart() {
	s.Stop()
	s.Start()
}

// Close stops the server and waits for its goroutines. It may be called
// more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.Stop()
	s.wg.Wait()
}

func (s *Server) serve(c net.Conn) {
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.active--
		s.mu.Unlock()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	var wmu sync.Mutex // one writer at a time in concurrent mode
	var pending sync.WaitGroup
	defer pending.Wait()
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		handle := func() bool {
			resp, fault, ok := s.answerLine(line)
			if !ok {
				return true
			}
			wmu.Lock()
			defer wmu.Unlock()
			return s.write(c, resp, fault)
		}
		if s.Concurrent {
			pending.Add(1)
			go func() { defer pending.Done(); handle() }() // ends after one answer
			continue
		}
		if !handle() {
			return
		}
	}
}

// write sends resp, misbehaving as fault says; false means the
// connection is finished.
func (s *Server) write(c net.Conn, resp []byte, fault Fault) bool {
	switch fault {
	case FaultNeverReply:
		<-s.ctx.Done()
		return false
	case FaultGarbage:
		_, err := io.WriteString(c, "this is not json\n")
		return err == nil
	case FaultCloseMidReply:
		c.Write(resp[:len(resp)/2])
		c.Close()
		return false
	case FaultCloseBeforeReply:
		c.Close()
		return false
	case FaultHugeReply:
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		io.WriteString(c, `{"jsonrpc":"2.0","id":0,"result":"`)
		for n := 0; n < s.HugeSize; n += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return false
			}
		}
		_, err := io.WriteString(c, "\"}\n")
		return err == nil
	}
	_, err := c.Write(resp)
	return err == nil
}

// answerLine handles one line (a request, a notification or a batch) and
// returns the response line; ok is false when there is none.
func (s *Server) answerLine(line []byte) (resp []byte, fault Fault, ok bool) {
	if line[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
			return errorLine(json.RawMessage("null"), -32600, "invalid batch"), FaultNone, true
		}
		var out [][]byte
		for _, e := range elems {
			if r, _, ok := s.answerOne(e); ok {
				out = append(out, bytes.TrimSuffix(r, []byte("\n")))
			}
		}
		if len(out) == 0 {
			return nil, FaultNone, false
		}
		return append(append([]byte("["), bytes.Join(out, []byte(","))...), "]\n"...), FaultNone, true
	}
	return s.answerOne(line)
}

func (s *Server) answerOne(line []byte) ([]byte, Fault, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return errorLine(json.RawMessage("null"), -32700, "parse error"), FaultNone, true
	}
	req := Request{ID: m.ID, Method: m.Method, Params: m.Params}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	delay, faultFn := s.delay, s.fault
	s.mu.Unlock()
	if req.ID == nil {
		return nil, FaultNone, false
	}
	fault := FaultNone
	if faultFn != nil {
		fault = faultFn(req)
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-s.ctx.Done():
		}
	}
	id := req.ID
	if fault == FaultWrongID {
		id = json.RawMessage(`"not-your-id"`)
	}
	result, err := s.handler(s.ctx, req)
	if err != nil {
		if e, ok := err.(*Error); ok {
			b := errorLine(id, e.Code, e.Message)
			if e.Data != nil {
				d, _ := json.Marshal(e.Data)
				b = bytes.TrimSuffix(b, []byte("}}\n"))
				b = append(append(append(b, `,"data":`...), d...), "}}\n"...)
			}
			return b, fault, true
		}
		return errorLine(id, -32603, err.Error()), fault, true
	}
	raw, ok := result.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(result); err != nil {
			return errorLine(id, -32603, err.Error()), fault, true
		}
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"result":`...)
	out = append(out, raw...)
	return append(out, "}\n"...), fault, true
}

func errorLine(id json.RawMessage, code int64, msg string) []byte {
	m, _ := json.Marshal(msg)
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":` + itoa(code) + `,"message":` + string(m) + "}}\n")
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
