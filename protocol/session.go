package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero values of Server's limits.
const (
	DefaultMaxMessageSize   = 32 << 20
	DefaultMaxInFlight      = 256
	DefaultMaxPendingBytes  = 64 << 20
	DefaultShutdownGrace    = 5 * time.Second
	DefaultProgressInterval = 5 * time.Second
	DefaultPageSize         = 2000
)

// Server serves MCP over one newline-delimited JSON-RPC stream per call to
// Serve. Set its exported fields before the first Serve; after that they
// must not change. Its methods are safe for concurrent use, and one Server
// may serve several streams at once.
type Server struct {
	// Info names the server in initialize and discover results.
	Info Implementation
	// Instructions is sent to clients when non-empty.
	Instructions string
	// Tools is the tool table. Required.
	Tools ToolProvider
	// Logger receives the server's own logs; nil means none.
	Logger *zerolog.Logger
	// ListChanged declares tools.listChanged; call NotifyToolsChanged
	// when the list changes.
	ListChanged bool

	// MaxMessageSize bounds one incoming message in bytes, not counting
	// its line ending (default 32 MiB). A longer request is answered with
	// an error when its first bytes show its id, and skipped.
	MaxMessageSize int
	// MaxInFlight bounds concurrently running tool calls (default 256).
	// Past it, as many again wait their turn without holding up other
	// requests; past that the reader waits, which pushes back on the
	// client.
	MaxInFlight int
	// MaxPendingBytes bounds the memory a session holds for a client that
	// reads slowly or not at all (default 64 MiB): the bytes of responses
	// and notifications produced but not yet written. At the bound, the
	// reader stops reading requests and tool calls wait before they start,
	// until the writer has made room. Calls already running still finish,
	// so the bytes held may pass the bound by what those calls return (at
	// most MaxInFlight results); a message larger than the bound is still
	// written once nothing else is pending. A 2025-03-26 batch's responses
	// are bounded by it too: an element whose response would take the
	// batch past it is answered with an error instead.
	MaxPendingBytes int
	// ShutdownGrace bounds how long Serve waits for in-flight calls once
	// its context is cancelled (default 5 s).
	ShutdownGrace time.Duration
	// ProgressInterval is the heartbeat period of notifications/progress
	// for calls that carry a progress token (default 5 s; negative: off).
	ProgressInterval time.Duration
	// PageSize is the number of tools per tools/list page. 0 means one
	// page, unless the list is longer than DefaultPageSize tools: then
	// pages of DefaultPageSize, so no single message grows without bound.
	PageSize int

	mu       sync.Mutex
	sessions map[*session]struct{}
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// NotifyToolsChanged tells every connected client that wants to know that
// the tool list changed.
func (s *Server) NotifyToolsChanged() {
	for _, ss := range s.liveSessions() {
		ss.notifyToolsChanged()
	}
}

// Log sends a log message to every client that enabled logging at level
// or a more verbose one. data is any JSON-encodable value.
func (s *Server) Log(level LogLevel, logger string, data any) {
	for _, ss := range s.liveSessions() {
		if int32(level) >= ss.logLevel.Load() {
			ss.sendLog(level, logger, data)
		}
	}
}

func (s *Server) liveSessions() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// Serve reads requests from r and writes responses and notifications to w
// until r reaches EOF, ctx is cancelled, or a write to w fails.
//
// On EOF it lets in-flight requests finish, writes their responses and
// returns nil. On cancellation of ctx it does the same within
// ShutdownGrace, then cancels what is left. A failed write ends the session
// at once and is returned. Serve does not close r or w. If r blocks after
// ctx is cancelled, the goroutine reading it stays blocked until r returns;
// the caller owns r and may close it.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	if s.Tools == nil {
		return errors.New("protocol: Server.Tools is nil")
	}
	log := zerolog.Nop()
	if s.Logger != nil {
		log = *s.Logger
	}
	ss := &session{
		srv:      s,
		log:      log,
		out:      newOutbox(w, orDefault(s.MaxPendingBytes, DefaultMaxPendingBytes)),
		sem:      make(chan struct{}, orDefault(s.MaxInFlight, DefaultMaxInFlight)),
		queue:    make(chan struct{}, orDefault(s.MaxInFlight, DefaultMaxInFlight)),
		stopped:  make(chan struct{}),
		inflight: make(map[string]*call),
	}
	ss.out.yield = func() {
		// With many calls running, responses come in runs: yielding once
		// lets the calls that are ready queue theirs, so that one write
		// carries several (each write is a system call here and a wake-up
		// in the client), which makes most of the cost of a call under
		// pipelined load.
		if len(ss.sem) > coalesceFrom {
			runtime.Gosched()
		}
	}
	ss.logLevel.Store(int32(logOff))
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = make(map[*session]struct{})
	}
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
	}()
	return ss.serve(ctx, r)
}

// session is the state of one stream.
type session struct {
	srv *Server
	log zerolog.Logger
	out *outbox

	sem   chan struct{} // one slot per running call
	queue chan struct{} // one place per call waiting for a slot

	mu       sync.Mutex
	stopping bool          // no new calls are started
	stopped  chan struct{} // closed when stopping is set
	calls    sync.WaitGroup
	inflight map[string]*call // by id as sent
	listens  int              // open subscriptions/listen streams

	version    atomic.Pointer[string] // negotiated legacy version; nil before initialize
	modernSeen atomic.Bool            // a modern (2026-07-28) request was served
	logLevel   atomic.Int32           // minimum level sent to the client; logOff when disabled
}

// coalesceFrom is the number of running calls above which the writer
// yields before it flushes; with fewer, yielding would only delay the
// response.
const coalesceFrom = 8

// maxListens bounds the subscriptions/listen streams open at once in a
// session. They are not tool calls, so they take no slot of the in-flight
// limit (streams that never end would otherwise starve calls), but each
// holds a goroutine: a client needs one or two.
const maxListens = 64

func (ss *session) serve(ctx context.Context, r io.Reader) error {
	// Calls keep ctx's values but not its cancellation: cancelling Serve's
	// ctx ends them only after the grace period, through cancelCalls.
	base := context.WithoutCancel(ctx)
	defer ss.cancelCalls()
	grace := orDefault(ss.srv.ShutdownGrace, DefaultShutdownGrace)

	// The writer is owned by serve, which waits for it below.
	go ss.out.run()
	// The reader is owned by serve: it ends at EOF, on a read error, or
	// once the session stops. After a cancellation serve does not wait for
	// it (a blocked Read cannot be interrupted), but it starts no call
	// once stopping is set.
	readDone := make(chan error, 1)
	go func() { readDone <- ss.read(base, r) }()

	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
	case <-ss.out.done:
	}
	ss.stop()

	// The calls in flight finish: without limit after EOF (each call is
	// bounded by its own timeout), within the grace period on shutdown,
	// which may also come while they finish (a client closes stdin, then
	// signals). A failed write cancels them at once.
	callsDone := make(chan struct{})
	go func() { ss.calls.Wait(); close(callsDone) }() // ends when every call has returned
	select {
	case <-callsDone:
	case <-ss.out.done:
	case <-ctx.Done():
		select {
		case <-callsDone:
		case <-ss.out.done:
		case <-time.After(grace):
			ss.log.Warn().Msg("shutdown grace period over, cancelling calls in flight")
		}
	}
	ss.cancelCalls()
	// On shutdown, neither a tool provider that ignores cancellation nor a
	// client that stopped reading keeps Serve from returning.
	wait := func(done <-chan struct{}) bool {
		if ctx.Err() == nil {
			<-done
			return true
		}
		select {
		case <-done:
			return true
		case <-time.After(grace):
			return false
		}
	}
	if !wait(callsDone) {
		return errors.New("calls in flight did not end at shutdown")
	}
	ss.out.close()
	if !wait(ss.out.done) {
		return errors.New("stdout blocked at shutdown: responses could not be written")
	}
	if ss.out.err != nil {
		return fmt.Errorf("writing to the client: %w", ss.out.err)
	}
	if readErr != nil {
		return fmt.Errorf("reading from the client: %w", readErr)
	}
	return nil
}

// cancelCalls cancels every call in flight. Each call's context is its
// own, not derived from one the session cancels: calls would all register
// with, and contend for, that one parent.
func (ss *session) cancelCalls() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.inflight {
		c.cancel()
	}
}

// stop refuses new calls and ends the listen streams, which never end by
// themselves, so that their final results are written with the other
// responses.
func (ss *session) stop() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.stopping = true
	close(ss.stopped)
	for _, c := range ss.inflight {
		if c.info.flags&stream != 0 {
			c.cancel()
		}
	}
}

// read reads and handles lines until the input ends or the session stops.
// It waits for room before each line: a client that does not read its
// responses gets no more of them.
func (ss *session) read(ctx context.Context, r io.Reader) error {
	lr := newLineReader(r, orDefault(ss.srv.MaxMessageSize, DefaultMaxMessageSize))
	for ss.out.waitRoom(ss.stopped) {
		line, tooLong, err := lr.next()
		if tooLong {
			ss.tooLong(line)
		} else {
			ss.handleLine(ctx, line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// tooLong answers a message longer than the limit, of which prefix is
// the start: with its id, when the start shows it. A response from the
// client, a notification, or a message whose id does not show, is not
// answered.
func (ss *session) tooLong(prefix []byte) {
	max := orDefault(ss.srv.MaxMessageSize, DefaultMaxMessageSize)
	ss.log.Warn().Int("max_bytes", max).Msg("message too long")
	if id, response := idFromPrefix(prefix); id != nil && !response {
		ss.out.send(encodeError(id, &Error{
			Code:    CodeInvalidRequest,
			Message: fmt.Sprintf("message longer than %d bytes; raise --max-message-size to accept it", max),
		}))
	}
}

// handleLine handles one line: a message or a batch.
func (ss *session) handleLine(ctx context.Context, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] == '[' {
		ss.handleBatch(ctx, line)
		return
	}
	rq, ignore, errID, err := decodeMessage(line)
	switch {
	case err != nil:
		ss.log.Debug().Err(err).Msg("bad message")
		ss.out.send(encodeError(errID, WireError(err)))
	case ignore:
		ss.log.Debug().Msg("ignoring a response or an unreadable notification from the client")
	default:
		ss.dispatch(ctx, &rq, nil)
	}
}

// call is a request running on a goroutine of its own (tools/call,
// subscriptions/listen), registered so that notifications/cancelled can
// reach it.
type call struct {
	ss        *session
	rq        *request
	info      methodInfo
	p         params
	b         *batch // the batch it belongs to, or nil
	cancel    context.CancelFunc
	cancelled atomic.Bool // by the client: no response is written
	running   bool        // holds a slot in sem (or is a stream); else a place in queue

	toolsChanged bool // a listen stream that announces tool list changes; guarded by ss.mu
}

type callKey struct{}

// errShuttingDown answers a call that cannot start because the session
// is ending.
var errShuttingDown = &Error{Code: CodeInternalError, Message: "server is shutting down"}

// startCall registers a call, within its limits, and starts its
// goroutine, which the session owns: serve waits for it through calls.
func (ss *session) startCall(ctx context.Context, rq *request, info methodInfo, p params, b *batch) {
	c := &call{ss: ss, rq: rq, info: info, p: p, b: b}
	if info.flags&stream != 0 {
		c.running = true // bounded by maxListens instead
	} else {
		// Take a slot to run in, or else a place in line: a call in line
		// waits on its own goroutine, so cancellations, pings and lists
		// still get through. Only with the line full too does the reader
		// wait, which pushes back on the client.
		select {
		case ss.sem <- struct{}{}:
			c.running = true
		case ss.queue <- struct{}{}:
		case <-ss.stopped:
			ss.reply(b, rq, encodeError(rq.id, errShuttingDown))
			return
		}
	}
	key := string(rq.id)
	ss.mu.Lock()
	var refuse *Error
	switch _, dup := ss.inflight[key]; {
	case ss.stopping:
		refuse = errShuttingDown
	case dup:
		refuse = &Error{Code: CodeInvalidRequest, Message: "a request with this id is already in flight"}
	case info.flags&stream != 0 && ss.listens >= maxListens:
		refuse = &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("too many open subscriptions/listen streams (%d); end one first", maxListens)}
	}
	if refuse != nil {
		ss.mu.Unlock()
		c.release()
		ss.reply(b, rq, encodeError(rq.id, refuse))
		return
	}
	if info.flags&stream != 0 {
		ss.listens++
	}
	ctx, c.cancel = context.WithCancel(context.WithValue(ctx, callKey{}, c))
	ss.inflight[key] = c
	ss.calls.Add(1)
	ss.mu.Unlock()
	go c.run(ctx)
}

// run waits for a slot and for room to write, runs the call and sends its
// response. It ends when the handler returns (bounded by the call's
// timeout or cancellation).
func (c *call) run(ctx context.Context) {
	ss, rq := c.ss, c.rq
	defer ss.calls.Done()
	defer c.cancel()
	if !c.running {
		select {
		case ss.sem <- struct{}{}:
			<-ss.queue
			c.running = true
		case <-ctx.Done():
		}
	}
	var resp []byte
	switch {
	case !c.running, c.info.flags&concurrent != 0 && !ss.out.waitRoom(ctx.Done()):
		resp = encodeError(rq.id, errShuttingDown)
	default:
		res, err := ss.handle(ctx, rq, c.info, c.p)
		resp = ss.encode(rq, c.info, res, err)
	}
	c.release()
	ss.mu.Lock()
	delete(ss.inflight, string(rq.id))
	if c.info.flags&stream != 0 {
		ss.listens--
	}
	ss.mu.Unlock()
	if c.cancelled.Load() {
		ss.log.Debug().Str("method", rq.method).Msg("request cancelled by client, no response")
		resp = nil // but a batch still counts it as answered
	}
	ss.reply(c.b, rq, resp)
}

// release gives back the call's slot or its place in line.
func (c *call) release() {
	switch {
	case c.info.flags&stream != 0:
	case c.running:
		<-c.ss.sem
	default:
		<-c.ss.queue
	}
}

// callOf returns the call ctx belongs to, or nil.
func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}
