// Package sockettest runs fake Tairseach backends for tests, the way
// net/http/httptest runs fake HTTP servers: NewServer listens on a fresh
// Unix socket, answers with a handler, records every request, and has
// knobs for the ways a real backend misbehaves (delay, never replying,
// garbage, a wrong id, closing mid-reply, an enormous reply) and for
// crashes and restarts.
//
// Like the real backend, a Server speaks newline-delimited JSON-RPC 2.0,
// answers the requests of one connection one at a time and in order,
// answers a batch (a JSON array) with an array, and answers notifications
// not at all. It reads JSON as github.com/go-json-experiment/json does by
// default: member names match exactly, and a message with a repeated name
// or invalid UTF-8 is a parse error.
package sockettest

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Request is one request the server received.
type Request struct {
	// ID is the id exactly as sent; nil for a notification.
	ID jsontext.Value
	// Method is the method name.
	Method string
	// Params are the params exactly as sent; nil when absent.
	Params jsontext.Value
	// Peer is the client at the other end of the connection, for a
	// handler that speaks during the call: notifications, requests of
	// its own.
	Peer *Peer
}

// Error is an error a Handler returns to answer with that JSON-RPC error.
type Error struct {
	Code    int64
	Message string
	Data    any // sent as "data" when not nil
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Handler answers one request: a result (a jsontext.Value is sent as it
// is, anything else is marshalled with github.com/go-json-experiment/json,
// map keys sorted), or an error (an *Error is sent as that JSON-RPC error,
// any other as -32603 with its text). ctx
// is cancelled when the client hangs up or the server closes the
// connection. Handlers of different connections run concurrently.
type Handler func(ctx context.Context, req Request) (result any, err error)

// Echo answers every request with its params (null when there are none).
func Echo(_ context.Context, req Request) (any, error) {
	if len(req.Params) == 0 {
		return jsontext.Value("null"), nil
	}
	return req.Params, nil
}

// Fault is a way to misbehave on one request.
type Fault int

// The faults. The handler runs only for those whose reply needs its result.
const (
	FaultNone             Fault = iota
	FaultNeverReply             // read the request, never answer; the connection hangs until it closes
	FaultGarbage                // answer "this is not json"
	FaultWrongID                // answer with another id: the request's plus one, or "not-your-id"
	FaultCloseMidReply          // write half the reply, then close the connection
	FaultCloseBeforeReply       // close the connection without answering (see StreamingParser)
	FaultHugeReply              // answer a line of HugeSize bytes, written in pieces
)

var faultNames = [...]string{"none", "never reply", "garbage", "wrong id", "close mid-reply", "close before reply", "huge reply"}

// String names the fault.
func (f Fault) String() string {
	if f >= 0 && int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Server is a fake backend. Set its exported fields before Start (or use
// NewServer for the defaults); after Start they must not change. The fault
// and the delay may change at any time, through SetFault and SetDelay. Its
// methods are safe for concurrent use; Start and Restart report failure
// with tb.Fatal, so call them from the test's goroutine.
type Server struct {
	// Path is the socket path: short, in a fresh directory, mode 0600.
	Path string
	// Concurrent makes the server answer pipelined requests of one
	// connection concurrently, possibly out of order; by default it
	// answers one at a time per connection, like the real backend.
	Concurrent bool
	// HugeSize is the length of a FaultHugeReply line (default 64 MiB).
	HugeSize int
	// NoRecord stops Requests from recording: for benchmarks, where the
	// record would grow without bound.
	NoRecord bool
	// StreamingParser makes the server read requests as a backend that
	// parses JSON straight from the socket does: a byte at a time, up to
	// the end of each JSON value, so the newline after a request stays
	// unread until the next request is read. A fault that closes the
	// connection then leaves that newline unread, and the kernel reports
	// a reset to the client instead of an end of file, although the
	// request was read and recorded. Such a server reads the next request
	// only once it has answered one (Concurrent does not apply), and a
	// line that is not JSON closes the connection, as there is no telling
	// where the next message starts.
	StreamingParser bool

	tb      testing.TB
	handler Handler
	dir     string
	wg      sync.WaitGroup // every goroutine the server starts; Close waits for it

	mu       sync.Mutex
	ln       *net.UnixListener // nil while stopped
	conns    map[*serverConn]struct{}
	requests []Request
	arrived  chan struct{} // closed and replaced when a request is recorded
	delay    time.Duration
	fault    func(Request) Fault
	open     int // connections now
	maxOpen  int // most connections at once
	accepted int // connections ever
	closed   bool
}

// serverConn is one accepted connection.
type serverConn struct {
	s      *Server
	nc     net.Conn
	cancel context.CancelFunc // cancels the connection's context: its handlers, delays and hangs
	wmu    sync.Mutex         // one writer at a time
	once   sync.Once
	peer   peerState // the handlers' requests to the client awaiting a response
}

// NewServer starts a server that answers with h (nil means Echo) and is
// closed when the test ends.
func NewServer(tb testing.TB, h Handler) *Server {
	tb.Helper()
	s := NewUnstartedServer(tb, h)
	s.Start()
	return s
}

// NewUnstartedServer returns a server to configure before Start. It is
// closed when the test ends.
func NewUnstartedServer(tb testing.TB, h Handler) *Server {
	tb.Helper()
	if h == nil {
		h = Echo
	}
	// A socket path must fit in about 104 bytes, which t.TempDir can
	// exceed, and so can $TMPDIR on macOS.
	base := os.TempDir()
	if len(base) > 60 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "st")
	if err != nil {
		tb.Fatalf("sockettest: %v", err)
	}
	s := &Server{
		Path:     filepath.Join(dir, "backend.sock"),
		HugeSize: 64 << 20,
		tb:       tb,
		handler:  h,
		dir:      dir,
		conns:    map[*serverConn]struct{}{},
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts listening; after Stop, it starts again.
func (s *Server) Start() {
	s.tb.Helper()
	if err := s.listen(); err != nil {
		s.tb.Fatalf("sockettest: %v", err)
	}
}

func (s *Server) listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("start %s: server closed", s.Path)
	case s.ln != nil:
		return fmt.Errorf("start %s: already listening", s.Path)
	}
	os.Remove(s.Path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.Path, Net: "unix"})
	if err != nil {
		return err
	}
	if err := os.Chmod(s.Path, 0o600); err != nil {
		ln.Close()
		return err
	}
	s.ln = ln
	s.wg.Add(1)
	// The accept loop ends when ln is closed (Stop, Restart, Close).
	go func() {
		defer s.wg.Done()
		s.accept(ln)
	}()
	return nil
}

func (s *Server) accept(ln *net.UnixListener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		sc := &serverConn{s: s, nc: nc, cancel: cancel}
		s.mu.Lock()
		if s.ln != ln { // stopped since Accept returned
			s.mu.Unlock()
			cancel()
			nc.Close()
			continue
		}
		s.conns[sc] = struct{}{}
		s.open++
		s.accepted++
		s.maxOpen = max(s.maxOpen, s.open)
		s.wg.Add(1)
		s.mu.Unlock()
		// serve ends when the connection closes (the client, a fault,
		// CloseClientConnections, Stop or Close).
		go func() {
			defer s.wg.Done()
			s.serve(ctx, sc)
		}()
	}
}

// SetDelay makes every answer wait d first. A delay never holds up Close.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// SetFault chooses a fault for each request (not for notifications or
// the elements of a batch); nil means none. f may be called concurrently.
func (s *Server) SetFault(f func(Request) Fault) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// Requests returns every well-formed request and notification received so
// far, batch elements included, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// MaxConns returns the most connections that were open at once.
func (s *Server) MaxConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxOpen
}

// Accepted returns how many connections the server has accepted.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// CloseClientConnections closes every open connection, as a crash would,
// and keeps listening. When it returns, clients see the connections
// closed.
func (s *Server) CloseClientConnections() {
	s.mu.Lock()
	conns := slices.Collect(maps.Keys(s.conns))
	s.mu.Unlock()
	for _, sc := range conns {
		sc.close()
	}
}

// Stop takes the backend down: no listener, no connections, no socket
// file. Start or Restart brings it back on the same Path.
func (s *Server) Stop() {
	s.mu.Lock()
	ln := s.ln
	s.ln = nil
	s.mu.Unlock()
	if ln != nil {
		ln.Close() // removes the socket file
	}
	s.CloseClientConnections()
}

// Restart simulates a backend restart: Stop, then listen again on Path.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	s.Start()
}

// Close stops the server, waits for its goroutines (handlers included) and
// removes its directory. It may be called more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.Stop()
	s.wg.Wait()
	os.RemoveAll(s.dir)
}

func (s *Server) knobs() (time.Duration, func(Request) Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delay, s.fault
}

func (s *Server) record(req Request) {
	if s.NoRecord {
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if s.arrived != nil {
		close(s.arrived)
		s.arrived = nil
	}
	s.mu.Unlock()
}

// WaitRequest waits until a request for which match reports true has
// been received, or ctx ends; it reports whether one was. Tests use it to
// act once the backend is in the middle of a call, without polling.
func (s *Server) WaitRequest(ctx context.Context, match func(Request) bool) bool {
	for {
		s.mu.Lock()
		if slices.ContainsFunc(s.requests, match) {
			s.mu.Unlock()
			return true
		}
		if s.arrived == nil {
			s.arrived = make(chan struct{})
		}
		arrived := s.arrived
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return false
		}
	}
}
