package protocol

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero values of Server's limits.
const (
	DefaultMaxMessageSize   = 32 << 20
	DefaultMaxInFlight      = 256
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

	// MaxMessageSize bounds one incoming line in bytes (default 32 MiB).
	// A longer line is answered with an error and skipped.
	MaxMessageSize int
	// MaxInFlight bounds concurrently running tool calls (default 256).
	// Past it, as many again wait their turn without holding up other
	// requests; past that the reader waits, which pushes back on the
	// client.
	MaxInFlight int
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

func (s *Server) logger() *zerolog.Logger {
	if s.Logger == nil {
		l := zerolog.Nop()
		return &l
	}
	return s.Logger
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
		ss.sendLog(level, logger, data)
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
	ss := newSession(s, w)
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
	return ss.run(ctx, r)
}

// session is the state of one stream.
type session struct {
	srv *Server
	log zerolog.Logger

	w          *bufio.Writer
	rawW       io.Writer
	out        chan outMsg   // lines for the writer goroutine
	quit       chan struct{} // closed to make the writer flush and stop
	writerDone chan struct{} // closed when the writer goroutine has returned
	writeErr   error         // set by the writer before writerDone closes

	sem   chan struct{} // one slot per running call
	queue chan struct{} // one place per call waiting for a slot

	mu       sync.Mutex
	stopping bool // no new calls are started
	calls    sync.WaitGroup
	inflight map[string]*call
	listens  int // open subscriptions/listen streams

	version    atomic.Pointer[string] // negotiated legacy version; nil before initialize
	modernSeen atomic.Bool            // a modern (2026-07-28) request was served
	logLevel   atomic.Int32           // minimum level sent to the client; logOff when disabled

	subs subscriptions

	// Reader state. One goroutine reads at a time, but which one changes:
	// a reader that meets a tools/call runs the call itself and hands the
	// reading on to another (see worker).
	br       *bufio.Reader
	long     []byte     // gathers lines longer than br's buffer
	readDone chan error // receives the end of reading, once

	// Workers: goroutines that take turns reading and run the calls they
	// read, then wait for another turn. Reusing them keeps their grown
	// stacks; a fresh goroutine per call spends a tenth of a call's CPU
	// growing its stack.
	turn        chan struct{} // hands the reader role to an idle worker
	stopWorkers chan struct{} // closed when the session ends: idle workers exit
	idle        atomic.Int32  // workers waiting for a turn
}

// maxIdleWorkers bounds the workers kept waiting after a burst of calls.
// A worker that exits is replaced by a new goroutine when calls pick up,
// whose stack must grow again to a call's depth, a copy each time: with
// 16, that churn was 5% of a busy bridge's CPU under 64 calls in flight
// (scripts/bench). Idle workers cost their stacks, which the collector
// shrinks while they wait.
const maxIdleWorkers = 64

// call is a long request in flight (tools/call, subscriptions/listen):
// registered so that notifications/cancelled can reach it, and what
// ClientLog finds in its context. One allocation holds it all.
type call struct {
	ss        *session
	req       request
	rc        *reqContext
	b         *batch      // the batch it belongs to, or nil
	key       string      // in ss.inflight
	cx        callCtx     // its context
	cancelled atomic.Bool // set by notifications/cancelled: no response is written
	running   bool        // holds a slot in sem (or is a listen stream); otherwise a place in queue
	listen    bool        // a subscriptions/listen stream: counted in ss.listens, not in sem
}

// maxListens bounds the subscriptions/listen streams open at once in a
// session. They are not tool calls, so they take no slot of the in-flight
// limit (streams that never end would otherwise starve calls), but each
// holds a goroutine: a client needs one or two.
const maxListens = 64

func newSession(srv *Server, w io.Writer) *session {
	ss := &session{
		srv:        srv,
		log:        *srv.logger(),
		rawW:       w,
		w:          bufio.NewWriterSize(w, 64<<10),
		out:        make(chan outMsg, 64),
		quit:       make(chan struct{}),
		writerDone: make(chan struct{}),
		sem:        make(chan struct{}, orDefault(srv.MaxInFlight, DefaultMaxInFlight)),
		queue:      make(chan struct{}, orDefault(srv.MaxInFlight, DefaultMaxInFlight)),
		inflight:   make(map[string]*call),
	}
	ss.logLevel.Store(logOff)
	return ss
}

func (ss *session) run(ctx context.Context, r io.Reader) error {
	// The writer goroutine is owned by run, which waits for writerDone below.
	go ss.writeLoop()

	// The reader goroutine is owned by run; it exits at EOF, on a read
	// error, or when the writer has failed. After a cancellation run does
	// not wait for it (a blocked Read cannot be interrupted), but it
	// starts no call once stopping is set.
	ss.br = bufio.NewReaderSize(r, 64<<10)
	ss.readDone = make(chan error, 1)
	ss.turn = make(chan struct{})
	ss.stopWorkers = make(chan struct{})
	readDone := ss.readDone
	// Workers are owned by run: the one reading ends at EOF (run does not
	// wait for it after a cancellation, as a blocked Read cannot be
	// interrupted); idle ones end when stopWorkers is closed; the others
	// are calls, which run waits for through ss.calls.
	go ss.worker(true)

	var readErr error
	shutdown := false
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
		shutdown = true
	case <-ss.writerDone:
	}

	ss.mu.Lock()
	ss.stopping = true
	ss.mu.Unlock()
	// Listen streams never end by themselves: end them now, so that
	// their final results are written with the other responses.
	ss.subs.closeAll()

	// Wait for the calls in flight: without limit after EOF (each call is
	// bounded by its own timeout), within the grace period on shutdown,
	// which may also come while waiting after EOF (a client closes stdin,
	// then signals).
	callsDone := make(chan struct{})
	go func() { ss.calls.Wait(); close(callsDone) }() // exits when every call has returned
	if !shutdown {
		select {
		case <-callsDone:
		case <-ss.writerDone:
			ss.cancelCalls()
			<-callsDone
		case <-ctx.Done():
			shutdown = true
		}
	}
	if shutdown {
		grace := time.NewTimer(orDefault(ss.srv.ShutdownGrace, DefaultShutdownGrace))
		select {
		case <-callsDone:
		case <-grace.C:
			ss.log.Warn().Msg("shutdown grace period over, cancelling calls in flight")
			ss.cancelCalls()
			// Cancelled calls end at once, unless their responses cannot be
			// written because the client stopped reading: then give up.
			stuck := time.NewTimer(orDefault(ss.srv.ShutdownGrace, DefaultShutdownGrace))
			select {
			case <-callsDone:
				stuck.Stop()
			case <-stuck.C:
				return errors.New("stdout blocked at shutdown: responses could not be written")
			}
		case <-ss.writerDone:
			ss.cancelCalls()
			<-callsDone
		}
		grace.Stop()
	}
	ss.cancelCalls()
	close(ss.stopWorkers)

	close(ss.quit)
	if shutdown {
		// A client that stopped reading must not keep us from exiting.
		select {
		case <-ss.writerDone:
		case <-time.After(orDefault(ss.srv.ShutdownGrace, DefaultShutdownGrace)):
			return errors.New("stdout blocked at shutdown")
		}
	} else {
		<-ss.writerDone
	}
	if ss.writeErr != nil {
		return fmt.Errorf("writing to the client: %w", ss.writeErr)
	}
	if readErr != nil {
		return fmt.Errorf("reading from the client: %w", readErr)
	}
	return nil
}

// outMsg is one line for the writer: a line without its newline, a tool
// list in parts, or a large tool result in parts (so no line of their
// size is built).
type outMsg struct {
	line  []byte
	list  *listParts
	parts *respParts
}

// batchWritesFrom is the number of calls in flight above which the
// writer yields once before flushing. With 64 in flight it cut writes to
// stdout from 0.8 to 0.2 per call and the bridge's CPU per call by a
// tenth (scripts/bench); with few, a yield would only delay the flush.
const batchWritesFrom = 8

// writeLoop is the only writer of the stream.
func (ss *session) writeLoop() {
	defer close(ss.writerDone)
	var scratch []byte // escapes the texts of responses in parts
	write := func(m outMsg) bool {
		var err error
		switch {
		case m.list != nil:
			err = m.list.writeTo(ss.w)
		case m.parts != nil:
			scratch, err = m.parts.writeTo(ss.w, scratch)
		default:
			_, err = ss.w.Write(append(m.line, '\n'))
		}
		if err == nil && len(ss.out) == 0 && len(ss.sem) > batchWritesFrom {
			// Other calls' replies may be ready to run: let them queue
			// their responses, so one write carries several. Each write
			// is a system call here and a wake-up in the client.
			runtime.Gosched()
		}
		if err == nil && len(ss.out) == 0 {
			err = ss.w.Flush()
		}
		if err != nil {
			ss.writeErr = err
			return false
		}
		return true
	}
	for {
		select {
		case m := <-ss.out:
			if !write(m) {
				return
			}
		case <-ss.quit:
			for {
				select {
				case m := <-ss.out:
					if !write(m) {
						return
					}
				default:
					if err := ss.w.Flush(); err != nil {
						ss.writeErr = err
					}
					return
				}
			}
		}
	}
}

// send queues one line for the writer. It blocks while the writer is
// behind (that is the backpressure) and drops the line once the writer
// has stopped.
func (ss *session) send(line []byte) { ss.enqueue(outMsg{line: line}) }

func (ss *session) enqueue(m outMsg) {
	select {
	case ss.out <- m:
	case <-ss.writerDone:
	}
}

var errLineTooLong = errors.New("line too long")

// worker takes turns reading (it starts with the turn when reading is
// true). When the line it reads is a long request, it hands the turn to
// an idle worker (or a new one) and runs the request itself: the request
// starts at once on a running goroutine, instead of waiting to be
// scheduled, which is most of a call's latency on an idle machine.
func (ss *session) worker(reading bool) {
	for {
		if !reading {
			if ss.idle.Add(1) > maxIdleWorkers {
				ss.idle.Add(-1)
				return
			}
			select {
			case <-ss.turn:
				ss.idle.Add(-1)
			case <-ss.stopWorkers:
				ss.idle.Add(-1)
				return
			}
		}
		c := ss.readUntilCall()
		if c == nil {
			return // reading ended
		}
		select {
		case ss.turn <- struct{}{}:
		default:
			go ss.worker(true)
		}
		c.run()
		reading = false
	}
}

// readUntilCall reads and dispatches lines until one is a long request,
// which it returns for the caller to run, or until the input ends: then
// it reports the end on readDone and returns nil.
func (ss *session) readUntilCall() *call {
	maxSize := orDefault(ss.srv.MaxMessageSize, DefaultMaxMessageSize)
	for {
		line, err := ss.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it, up to the limit.
			ss.long = append(ss.long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = ss.br.ReadSlice('\n')
				if len(ss.long)+messageLen(line, err) > maxSize {
					for errors.Is(err, bufio.ErrBufferFull) {
						_, err = ss.br.ReadSlice('\n')
					}
					ss.handleTooLong(maxSize, ss.long)
					ss.long = ss.long[:0]
					line = nil
					break
				}
				ss.long = append(ss.long, line...)
			}
			if line != nil {
				line = ss.long
			}
			if cap(ss.long) > 1<<20 {
				ss.long = nil // do not keep a huge buffer for the rest of the session
			}
		} else if messageLen(line, err) > maxSize {
			ss.handleTooLong(maxSize, line)
			line = nil
		}
		var c *call
		if len(line) > 0 {
			c = ss.handleLine(line)
		}
		done, result := false, error(nil)
		select {
		case <-ss.writerDone:
			done = true
		default:
		}
		if err != nil && !done {
			done = true
			if !errors.Is(err, io.EOF) {
				result = err
			}
		}
		if !done {
			ss.mu.Lock()
			done = ss.stopping
			ss.mu.Unlock()
		}
		switch {
		case done:
			if c != nil {
				go c.run() // counted in ss.calls, so run waits for it
			}
			ss.readDone <- result
			return nil
		case c != nil:
			return c
		}
	}
}

// messageLen is the length of what ReadSlice returned with err, not
// counting the newline that ends a line: the limit is on the message.
func messageLen(line []byte, err error) int {
	if err == nil {
		return len(line) - 1
	}
	return len(line)
}

// handleTooLong answers a message longer than maxSize, of which prefix is
// the start: with its id when the start shows it, so the client can tell
// which request failed.
func (ss *session) handleTooLong(maxSize int, prefix []byte) {
	id := idFromPrefix(prefix)
	ss.log.Warn().Int("max_bytes", maxSize).Msg("message too long")
	ss.send(appendErrorResponse(nil, id, &Error{
		Code:    CodeInvalidRequest,
		Message: fmt.Sprintf("message longer than %d bytes; raise --max-message-size to accept it", maxSize),
	}))
}

// handleLine handles one line: a message or a batch. For a request that
// runs long (tools/call, subscriptions/listen) it returns the call, for
// the caller to run on a goroutine of its own; the request is already
// registered as in flight.
func (ss *session) handleLine(line []byte) *call {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	// The reader reuses its buffer; requests keep sub-slices of the line
	// (params, arguments) beyond this call, so they get their own copy.
	line = bytes.Clone(line)
	if line[0] == '[' {
		ss.handleBatch(line)
		return nil
	}
	req, ignore, errID, err := decodeMessage(line)
	if err != nil {
		ss.log.Debug().Err(err).Msg("bad message")
		ss.send(appendErrorResponse(nil, errID, WireError(err)))
		return nil
	}
	if ignore {
		ss.log.Debug().Msg("ignoring a response or an unreadable notification from the client")
		return nil
	}
	return ss.dispatch(req, nil)
}

// handleBatch answers a JSON array of messages. Batches exist only in
// protocol 2025-03-26; in every other version the array is refused whole.
func (ss *session) handleBatch(line []byte) {
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			ss.send(appendErrorResponse(nil, nullID, WireError(fmt.Errorf("%w: %v", ErrParse, err))))
		} else {
			ss.send(appendErrorResponse(nil, nullID, WireError(fmt.Errorf("%w: %v", ErrInvalidRequest, err))))
		}
		return
	}
	if v := ss.legacyVersion(); v != Version20250326 {
		ss.send(appendErrorResponse(nil, nullID, &Error{
			Code:    CodeInvalidRequest,
			Message: fmt.Sprintf("JSON-RPC batches are not supported in protocol version %s (only in 2025-03-26)", v),
		}))
		return
	}
	if len(elems) == 0 {
		ss.send(appendErrorResponse(nil, nullID, &Error{Code: CodeInvalidRequest, Message: "empty batch"}))
		return
	}
	b := &batch{ss: ss, pending: len(elems)}
	for _, e := range elems {
		req, ignore, errID, err := decodeMessage(e)
		switch {
		case err != nil:
			b.respond(appendErrorResponse(nil, errID, WireError(err)))
		case ignore || req.isNotification():
			if !ignore {
				ss.dispatch(req, nil)
			}
			b.respond(nil)
		case req.Method == "initialize":
			b.respond(appendErrorResponse(nil, req.ID, &Error{Code: CodeInvalidRequest, Message: "initialize must not be part of a batch"}))
		default:
			if c := ss.dispatch(req, b); c != nil {
				go c.run() // counted in ss.calls, so run waits for it
			}
		}
	}
}

// batch gathers the responses to one batch and writes them as one array.
type batch struct {
	ss      *session
	mu      sync.Mutex
	pending int
	resps   [][]byte
}

// respond records one element's response (nil for elements that get none).
func (b *batch) respond(resp []byte) {
	b.mu.Lock()
	if resp != nil {
		b.resps = append(b.resps, resp)
	}
	b.pending--
	done := b.pending == 0
	b.mu.Unlock()
	if !done || len(b.resps) == 0 {
		return
	}
	out := []byte{'['}
	for i, r := range b.resps {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, r...)
	}
	b.ss.send(append(out, ']'))
}

// legacyVersion is the version negotiated by initialize, or the newest
// legacy version before initialize.
func (ss *session) legacyVersion() string {
	if v := ss.version.Load(); v != nil {
		return *v
	}
	return LatestLegacyVersion
}

// dispatch runs one request or notification. Its response goes to the
// writer, or into b when the request is part of a batch. A long request is
// returned as a call for the caller to run on its own goroutine.
func (ss *session) dispatch(req request, b *batch) *call {
	if req.isNotification() {
		ss.handleNotification(req)
		return nil
	}
	respond := ss.send
	if b != nil {
		respond = b.respond
	}
	rc, err := ss.requestContext(req)
	if err != nil {
		respond(appendErrorResponse(nil, req.ID, WireError(err)))
		return nil
	}
	if req.Method == "tools/call" || req.Method == "subscriptions/listen" {
		return ss.startCall(req, rc, b)
	}
	if req.Method == "tools/list" {
		list, err := ss.listTools(rc, req.ID)
		switch {
		case err != nil:
			respond(ss.encodeOutcome(req, nil, err))
		case b != nil:
			respond(list.appendTo(make([]byte, 0, list.size())))
		default:
			// Written from the cached encodings: a list can be
			// megabytes, and is neither copied nor kept.
			ss.enqueue(outMsg{list: list})
		}
		return nil
	}
	result, err := ss.handleRequest(rc, req)
	respond(ss.encodeOutcome(req, result, err))
	return nil
}

func (ss *session) encodeOutcome(req request, result []byte, err error) []byte {
	if err != nil {
		we := WireError(err)
		if we.Code == CodeInternalError {
			ss.log.Error().Err(err).Str("method", req.Method).Msg("request failed")
		} else {
			ss.log.Debug().Err(err).Str("method", req.Method).Msg("request refused")
		}
		return appendErrorResponse(nil, req.ID, we)
	}
	return appendResponse(nil, req.ID, result)
}

// startCall registers a long request, bounded by the in-flight limit, so
// notifications/cancelled can reach it, and returns it; the caller must
// run it, on a goroutine of its own (run waits for it through ss.calls).
// It returns nil when the request was answered at once.
func (ss *session) startCall(req request, rc *reqContext, b *batch) *call {
	c := &call{ss: ss, req: req, rc: rc, b: b, key: req.ID.key()}
	// Take a slot to run in, or else a place in line: a call in line
	// waits on its own goroutine (see run), so cancellations, pings and
	// lists still get through. Only with the line full too does the
	// reader wait, which pushes back on the client.
	if req.Method == "subscriptions/listen" {
		c.listen, c.running = true, true // bounded by maxListens instead
	} else {
		select {
		case ss.sem <- struct{}{}:
			c.running = true
		default:
			select {
			case ss.sem <- struct{}{}:
				c.running = true
			case ss.queue <- struct{}{}:
			case <-ss.writerDone:
				return nil
			}
		}
	}
	ss.mu.Lock()
	if ss.stopping {
		ss.mu.Unlock()
		c.release()
		c.respond(appendErrorResponse(nil, req.ID, errShuttingDown))
		return nil
	}
	if _, dup := ss.inflight[c.key]; dup {
		ss.mu.Unlock()
		c.release()
		c.respond(appendErrorResponse(nil, req.ID, &Error{Code: CodeInvalidRequest, Message: "a request with this id is already in flight"}))
		return nil
	}
	if c.listen {
		if ss.listens >= maxListens {
			ss.mu.Unlock()
			c.respond(appendErrorResponse(nil, req.ID, &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("too many open subscriptions/listen streams (%d); end one first", maxListens)}))
			return nil
		}
		ss.listens++
	}
	// Not derived from a session-wide context: every call would then
	// register with, and contend for, one parent. cancelCalls ends them.
	c.cx.init(c)
	ss.inflight[c.key] = c
	ss.calls.Add(1)
	ss.mu.Unlock()
	return c
}

// run runs the call and writes its response. The call is owned by the
// session: run waits for it via ss.calls; it ends when the handler
// returns (bounded by the call's timeout or cancellation).
func (c *call) run() {
	ss, req := c.ss, c.req
	defer ss.calls.Done()
	defer c.release()
	defer c.cx.cancel()
	var resp []byte
	var parts *respParts // the response in parts, instead of resp
	if !c.running {
		// In line: wait for a slot, unless cancelled first.
		select {
		case ss.sem <- struct{}{}:
			<-ss.queue
			c.running = true
		case <-c.cx.Done():
			resp = appendErrorResponse(nil, req.ID, errShuttingDown)
		}
	}
	func() {
		if !c.running {
			return
		}
		defer func() {
			if p := recover(); p != nil {
				ss.log.Error().Str("method", req.Method).Interface("panic", p).
					Bytes("stack", debug.Stack()).Msg("request handler panicked")
				resp = appendErrorResponse(nil, req.ID, &Error{Code: CodeInternalError, Message: "internal error"})
			}
		}()
		var result []byte
		var err error
		if req.Method == "subscriptions/listen" {
			result, err = ss.listen(&c.cx, c.rc, req)
		} else {
			var line []byte
			if line, parts, err = ss.callTool(&c.cx, c.rc, req, c.b == nil); err == nil {
				resp = line
				return
			}
		}
		resp = ss.encodeOutcome(req, result, err)
	}()
	ss.mu.Lock()
	delete(ss.inflight, c.key)
	if c.listen {
		ss.listens--
	}
	ss.mu.Unlock()
	if c.cancelled.Load() {
		ss.log.Debug().Str("method", req.Method).Msg("request cancelled by client, no response")
		resp, parts = nil, nil // but a batch still counts it as answered
	}
	if parts != nil { // never for a batch's call
		ss.enqueue(outMsg{parts: parts})
		return
	}
	c.respond(resp)
}

// release gives back the call's slot or its place in line.
func (c *call) release() {
	switch {
	case c.listen:
	case c.running:
		<-c.ss.sem
	default:
		<-c.ss.queue
	}
}

// errShuttingDown answers a call that cannot start because the session
// is ending.
var errShuttingDown = &Error{Code: CodeInternalError, Message: "server is shutting down"}

// respond sends the call's response, to the writer or into its batch;
// nil sends none.
func (c *call) respond(line []byte) {
	if c.b != nil {
		c.b.respond(line)
		return
	}
	if line != nil {
		c.ss.send(line)
	}
}

// cancelCalls cancels every call in flight. New calls are refused once
// stopping is set, which the session does first.
func (ss *session) cancelCalls() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.inflight {
		c.cx.cancel()
	}
}

// cancelRequest handles notifications/cancelled.
func (ss *session) cancelRequest(id ID) {
	ss.mu.Lock()
	call := ss.inflight[id.key()]
	ss.mu.Unlock()
	if call == nil {
		return // finished already, or never existed: the spec says ignore
	}
	call.cancelled.Store(true)
	call.cx.cancel()
}
