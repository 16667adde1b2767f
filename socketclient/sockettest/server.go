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
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
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

// close closes the connection and cancels its context; it may be called
// from any goroutine, more than once.
func (sc *serverConn) close() {
	sc.once.Do(func() {
		sc.cancel()
		sc.nc.Close()
		s := sc.s
		s.mu.Lock()
		delete(s.conns, sc)
		s.open--
		s.mu.Unlock()
	})
}

// write sends b whole; false means the connection is gone.
func (sc *serverConn) write(b []byte) bool {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	_, err := sc.nc.Write(b)
	return err == nil
}

// serve reads the lines of sc until it closes. Reading goes on while a
// line is answered, so that a client hanging up cancels the handler's
// context at once, as it would on the real backend; a StreamingParser
// reads the next request only once it has answered one.
func (s *Server) serve(ctx context.Context, sc *serverConn) {
	var answering sync.WaitGroup // the goroutines below; serve waits for them
	defer answering.Wait()
	defer sc.close()

	if s.StreamingParser {
		next := readValues(sc.nc)
		for {
			line, err := next()
			if err != nil || !s.answer(ctx, sc, s.parseLine(line)) {
				return
			}
		}
	}
	lines := make(chan []item, 16)
	if !s.Concurrent {
		answering.Add(1)
		// The one answerer of a sequential connection ends when the
		// connection closes.
		go func() {
			defer answering.Done()
			for {
				select {
				case items := <-lines:
					if !s.answer(ctx, sc, items) {
						sc.close()
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	next := readLines(sc.nc)
	for {
		line, err := next()
		if err != nil {
			return // a partial last line is dropped, as the client is gone
		}
		items := s.parseLine(line)
		if s.Concurrent {
			answering.Add(1)
			// Answers one line; ends early if the connection closes.
			go func() {
				defer answering.Done()
				if !s.answer(ctx, sc, items) {
					sc.close()
				}
			}()
			continue
		}
		select {
		case lines <- items:
		case <-ctx.Done():
			return
		}
	}
}

// readLines returns a func that reads the next non-blank line from r,
// without its newline and surrounding white space.
func readLines(r io.Reader) func() ([]byte, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	return func() ([]byte, error) {
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return nil, err
			}
			if line = bytes.TrimSpace(line); len(line) > 0 {
				return line, nil
			}
		}
	}
}

// readValues returns a func that reads the next JSON value from r a byte
// at a time, leaving what follows the value unread (see StreamingParser).
// Repeated names and invalid UTF-8 pass, for parseLine to answer as it
// would on a line.
func readValues(r io.Reader) func() ([]byte, error) {
	d := jsontext.NewDecoder(byteReader{r}, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return func() ([]byte, error) {
		v, err := d.ReadValue()
		return v.Clone(), err
	}
}

// byteReader reads at most one byte per Read from r.
type byteReader struct{ r io.Reader }

func (b byteReader) Read(p []byte) (int, error) { return b.r.Read(p[:min(len(p), 1)]) }

// item is one message of a line: a request to answer, or the error reply
// to a malformed one.
type item struct {
	req   Request
	reply []byte // set for a malformed message: the whole answer
	batch bool   // the item came in a batch
}

// parseLine splits a line into its messages and records the requests.
func (s *Server) parseLine(line []byte) []item {
	if !jsontext.Value(line).IsValid() {
		return []item{{reply: errorReply(nil, -32700, "Parse error", nil)}}
	}
	if line[0] != '[' {
		return []item{s.parseMessage(line)}
	}
	var elems []jsontext.Value
	json.Unmarshal(line, &elems) // valid JSON, and an array
	if len(elems) == 0 {
		return []item{{reply: errorReply(nil, -32600, "Invalid Request", nil)}}
	}
	items := make([]item, len(elems))
	for i, e := range elems {
		items[i] = s.parseMessage(e)
		items[i].batch = true
	}
	return items
}

func (s *Server) parseMessage(raw []byte) item {
	var m struct {
		ID     jsontext.Value `json:"id"`
		Method jsontext.Value `json:"method"`
		Params jsontext.Value `json:"params"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return item{reply: errorReply(nil, -32600, "Invalid Request", nil)}
	}
	var name string
	if m.Method.Kind() != '"' || json.Unmarshal(m.Method, &name) != nil {
		return item{reply: errorReply(m.ID, -32600, "Invalid Request", nil)}
	}
	req := Request{ID: m.ID, Method: name, Params: m.Params}
	s.record(req)
	return item{req: req}
}

// answer answers the items of one line; false means the connection is
// finished (closed by a fault, or gone).
func (s *Server) answer(ctx context.Context, sc *serverConn, items []item) bool {
	delay, faultFn := s.knobs()
	if !items[0].batch {
		it := items[0]
		switch {
		case it.reply != nil:
			return sc.write(it.reply)
		case it.req.ID == nil:
			s.handler(ctx, it.req)
			return true
		}
		fault := FaultNone
		if faultFn != nil {
			fault = faultFn(it.req)
		}
		return sleep(ctx, delay) && s.answerOne(ctx, sc, it.req, fault)
	}
	if !sleep(ctx, delay) {
		return false
	}
	out := []byte{'['}
	for _, it := range items {
		switch {
		case it.reply != nil:
			out = append(out, bytes.TrimSuffix(it.reply, []byte{'\n'})...)
		case it.req.ID == nil:
			s.handler(ctx, it.req)
			continue
		default:
			result, err := s.handler(ctx, it.req)
			out = append(out, bytes.TrimSuffix(reply(it.req.ID, result, err), []byte{'\n'})...)
		}
		out = append(out, ',')
	}
	if len(out) == 1 {
		return true // all notifications: no answer at all
	}
	out[len(out)-1] = ']'
	return sc.write(append(out, '\n'))
}

// answerOne answers a single request, misbehaving as fault says.
func (s *Server) answerOne(ctx context.Context, sc *serverConn, req Request, fault Fault) bool {
	switch fault {
	case FaultNeverReply:
		if s.Concurrent {
			return true // only this request goes unanswered
		}
		<-ctx.Done()
		return false
	case FaultGarbage:
		return sc.write([]byte("this is not json\n"))
	case FaultCloseBeforeReply:
		return false
	case FaultHugeReply:
		s.writeHuge(sc, req.ID)
		return true
	}
	result, err := s.handler(ctx, req)
	id := req.ID
	if fault == FaultWrongID {
		id = wrongID(id)
	}
	b := reply(id, result, err)
	if fault == FaultCloseMidReply {
		sc.write(b[:len(b)/2])
		return false
	}
	return sc.write(b)
}

// writeHuge writes a reply line of s.HugeSize bytes, newline included, a
// piece at a time, so that it never exists whole in memory.
func (s *Server) writeHuge(sc *serverConn, id jsontext.Value) {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	head := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":"`...)
	tail := []byte("\"}\n")
	if _, err := sc.nc.Write(head); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte{'x'}, 64<<10)
	for n := s.HugeSize - len(head) - len(tail); n > 0; n -= len(chunk) {
		if _, err := sc.nc.Write(chunk[:min(n, len(chunk))]); err != nil {
			return // the client gave up
		}
	}
	sc.nc.Write(tail)
}

// wrongID returns an id that is not id: the next integer (the likeliest
// mix-up), or a string.
func wrongID(id jsontext.Value) jsontext.Value {
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil && n < math.MaxInt64 {
		return strconv.AppendInt(nil, n+1, 10)
	}
	return jsontext.Value(`"not-your-id"`)
}

// reply encodes the answer to the request with id.
func reply(id jsontext.Value, result any, err error) []byte {
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: -32603, Message: err.Error()}
		}
		return errorReply(id, e.Code, e.Message, e.Data)
	}
	raw, ok := result.(jsontext.Value)
	if !ok {
		var merr error
		if raw, merr = json.Marshal(result, json.Deterministic(true)); merr != nil {
			return errorReply(id, -32603, "encode result: "+merr.Error(), nil)
		}
	}
	if len(raw) == 0 {
		raw = jsontext.Value("null")
	}
	if bytes.IndexByte(raw, '\n') >= 0 {
		raw = raw.Clone()
		if err := raw.Compact(); err != nil {
			return errorReply(id, -32603, "handler result is not JSON: "+err.Error(), nil)
		}
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"result":`...)
	out = append(out, raw...)
	return append(out, "}\n"...)
}

// errorReply encodes an error answer; a nil id is sent as null.
func errorReply(id jsontext.Value, code int64, message string, data any) []byte {
	if id == nil {
		id = jsontext.Value("null")
	}
	obj, err := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitzero"`
	}{code, message, data}, json.Deterministic(true))
	if err != nil {
		return errorReply(id, -32603, "encode error data: "+err.Error(), nil)
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"error":`...)
	out = append(out, obj...)
	return append(out, "}\n"...)
}

// sleep waits d unless ctx ends first; false means it did.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
