package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Session is one client's session with a Server: the protocol version it
// negotiated, its log level, its calls in flight, its listen streams and
// its byte budget. A transport makes one with NewSession and feeds it
// messages with Handle, each with the Sink its response goes to: stdio
// makes one for its stream (Serve), Streamable HTTP one per legacy session
// and one per modern request. Its methods are safe for concurrent use.
//
// Lock order: mu before a budget's root lock; neither is held while
// sending.
type Session struct {
	srv    *Server
	log    zerolog.Logger
	budget *budget
	out    Sink
	runner *runner

	// Who the session is, as its calls tell the providers.
	id        string                     // random, for the audit log
	transport string                     // how the client is connected: "stdio", "http"
	principal Principal                  // who its requests are for
	owner     Principal                  // who owns the tasks they create
	client    atomic.Pointer[ClientInfo] // the clientInfo of initialize; nil before it
	started   time.Time                  // when it was made

	// What it serves (its view: the Server's, or a named client's), and
	// what its client may do (see SessionOptions).
	tools           ToolProvider
	resources       ResourceProvider
	prompts         PromptProvider
	completions     CompletionProvider
	admit           func() (time.Duration, bool)
	denySampling    bool
	denyElicitation bool
	askOwner        Owner

	admitted chan struct{} // one place per tool call running or in line
	sem      chan struct{} // one slot per running tool call

	closed    atomic.Bool   // Close was called
	drainOnce sync.Once     // starts the wait behind drained
	drained   chan struct{} // closed once stopping and no call is left

	// mu guards what follows. Lock order: mu, then a budget's or an
	// outbox's (a notification is sent under mu); never the other way.
	mu       sync.Mutex
	stopping bool          // no new calls are started
	stopped  chan struct{} // closed when stopping is set
	calls    sync.WaitGroup
	inflight map[string]*flight // by id as sent
	listens  int                // open subscriptions/listen streams

	version    atomic.Pointer[string] // negotiated legacy version; nil before initialize
	modernSeen atomic.Bool            // a modern (2026-07-28) request was served
	logLevel   atomic.Int32           // minimum level sent to the client; logOff when disabled
	dropped    atomic.Int64           // notifications dropped for want of room

	pending     map[string]chan clientReply // requests of the server's, by id as sent; guarded by mu
	nextRequest atomic.Uint64               // the last id of a request of the server's
	caps        atomic.Pointer[clientCaps]  // what the client declared it can be asked, at initialize

	listsQueued [numLists]atomic.Bool // a list_changed of each list is queued and not yet written
}

// Sink takes the messages of a request, or of a session, for the client:
// a transport's stream. Send must not block: what it is given was counted
// against the session's budget, and the sink writes it or drops it, then
// releases it (Message.Release), exactly once. It is called from several
// goroutines.
type Sink interface {
	Send(m Message)
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

// SessionOptions say who a session is for.
type SessionOptions struct {
	// Transport names how the client is connected, such as "stdio" or
	// "http", for the records.
	Transport string
	// Principal is who the session's requests are for. The zero value
	// means the session itself (PrincipalSession, with the session's id).
	Principal Principal
	// Providers, when set, are what the session serves instead of the
	// Server's, field by field (a nil field is the Server's): a view of
	// the same tools narrowed to a named client's rights. Changes of the
	// lists are announced to every session alike (NotifyToolsChanged, …),
	// and each lists its own again.
	Providers *Providers
	// Admit, when set, decides as each call (tools/call, resources/read,
	// prompts/get, completion/complete) arrives whether the principal may
	// make one more now: a rate of calls. A call it refuses is answered at
	// once, without running: a tool call with an isError result, the
	// others with CodeRateLimited, both saying when to try again. It must
	// not block. A transport that refuses such calls itself (HTTP answers
	// 429) leaves it nil.
	Admit func() (retryAfter time.Duration, ok bool)
	// DenySampling and DenyElicitation forbid the session's calls to ask
	// the client's model for a completion (Call.Sample) or its user to
	// fill in a form (Call.Elicit) on the backend's behalf, whatever the
	// client declared: a named client's policy. Asking the user to confirm
	// a call (Call.Confirm) is the bridge's own question, never denied.
	DenySampling, DenyElicitation bool
	// TaskOwner is who owns the tasks its requests create, and may see them
	// from another session: the zero value means the Principal. A
	// transport whose principal does not outlive a connection names one
	// that does (over HTTP without a token, the local user), so that a
	// client that reconnects finds its tasks.
	TaskOwner Principal
	// AskOwner, when set, is asked the questions for the user that the
	// session's client cannot ask, as Server.Owner is for every session:
	// a named client's policy (confirmUnsupported page). It wins over
	// Server.Owner.
	AskOwner Owner
}

// Providers are what a session serves: its tools, resources and resource
// templates, prompts, and completions.
type Providers struct {
	Tools       ToolProvider
	Resources   ResourceProvider
	Prompts     PromptProvider
	Completions CompletionProvider
}

// NewSession starts a session whose messages that belong to no request
// (list changes, log messages) go to out. The caller ends it with Close.
func (s *Server) NewSession(out Sink, o SessionOptions) *Session {
	log := zerolog.Nop()
	if s.Logger != nil {
		log = *s.Logger
	}
	inFlight := orDefault(s.MaxInFlight, DefaultMaxInFlight)
	ss := &Session{
		srv:       s,
		id:        newSessionID(),
		started:   time.Now(),
		transport: o.Transport,
		principal: o.Principal,
		log:       log,
		budget:    newBudget(int64(orDefault(s.MaxHeldBytes, DefaultMaxHeldBytes)), s.total()),
		out:       out,
		admitted:  make(chan struct{}, 2*inFlight),
		sem:       make(chan struct{}, inFlight),
		stopped:   make(chan struct{}),
		drained:   make(chan struct{}),
		inflight:  make(map[string]*flight),
		pending:   make(map[string]chan clientReply),
		runner:    newRunner(),
	}
	if ss.principal.Kind == "" {
		ss.principal = Principal{Kind: PrincipalSession, ID: ss.id}
	}
	ss.tools, ss.resources, ss.prompts, ss.completions = s.Tools, s.Resources, s.Prompts, s.Completions
	if p := o.Providers; p != nil {
		if p.Tools != nil {
			ss.tools = p.Tools
		}
		if p.Resources != nil {
			ss.resources = p.Resources
		}
		if p.Prompts != nil {
			ss.prompts = p.Prompts
		}
		if p.Completions != nil {
			ss.completions = p.Completions
		}
	}
	ss.admit, ss.denySampling, ss.denyElicitation, ss.askOwner = o.Admit, o.DenySampling, o.DenyElicitation, o.AskOwner
	ss.owner = o.TaskOwner
	if ss.owner.Kind == "" {
		ss.owner = ss.principal
	}
	ss.logLevel.Store(int32(logOff))
	s.register(ss)
	return ss
}

// Handle handles msg, one message or a 2025-03-26 batch: the response,
// and the notifications and requests about it before it, go to out. It
// returns once the message is dispatched; the calls it starts run on,
// bounded by ctx, which a transport cancels when the client is gone for
// good. msg's bytes are counted against the session's budget until
// answered; Handle waits first while the budget is full, unless ctx ends.
func (ss *Session) Handle(ctx context.Context, msg []byte, out Sink) error {
	return ss.HandleReserved(ctx, msg, out, nil)
}

// HandleReserved is Handle for a message whose bytes r counted as they
// were read: they become the request's, counted against the session's
// budget until it is answered, with no moment uncounted or counted twice.
// It waits first, as Handle does, while the budget is full, but not for
// the room the message itself takes. r is spent whatever it returns (its
// Release then does nothing); a nil r counts msg as Handle does.
func (ss *Session) HandleReserved(ctx context.Context, msg []byte, out Sink, r *Reservation) error {
	if ss.closed.Load() {
		r.Release()
		return ErrSessionClosed
	}
	if !ss.budget.waitRoom(ctx, ss.stopped, r) {
		r.Release()
		if err := ctx.Err(); err != nil {
			return err
		}
		return ErrSessionClosed
	}
	var h *hold
	if r == nil {
		h = ss.budget.newHold()
		h.charge(len(msg))
	} else {
		h = r.handOver(ss.budget)
	}
	ss.handleLine(ctx, out, msg, h)
	return nil
}

// ErrSessionClosed is Handle's refusal of a message to a closed session.
var ErrSessionClosed = errors.New("protocol: session closed")

// WaitRoom waits until the session's budget, and its server's, have room
// for another message: a transport that reads a stream calls it before it
// reads on, so that a client that does not read its responses, or a
// backend that does not take its requests, gets no more requests read. It
// reports false when ctx ends or the session stops first.
func (ss *Session) WaitRoom(ctx context.Context) bool {
	return ss.budget.waitRoom(ctx, ss.stopped, nil)
}

// Busy reports whether the session has requests in flight: calls, listen
// streams, or requests of its own waiting for the client.
func (ss *Session) Busy() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.inflight) > 0
}

// ProtocolVersion returns the version the session negotiated, or "" before
// initialize.
func (ss *Session) ProtocolVersion() string {
	if v := ss.version.Load(); v != nil {
		return *v
	}
	return ""
}

// Drain stops the session taking new calls and ends its listen streams,
// which answer their final results; calls in flight go on. A transport
// drains its sessions when it shuts down, before it closes them.
func (ss *Session) Drain() { ss.stop() }

// Drained drains the session and returns a channel closed once every call
// in flight has returned, its response sent.
func (ss *Session) Drained() <-chan struct{} {
	ss.stop()
	ss.drainOnce.Do(func() {
		// Ends when the last call does: none starts once stopping is set.
		go func() { ss.calls.Wait(); close(ss.drained) }()
	})
	return ss.drained
}

// Close ends the session: it takes no more messages, its listen streams
// end and its calls are cancelled, each still answered to its sink. It
// returns once every call has returned. Closing twice is harmless.
func (ss *Session) Close() {
	if ss.closed.Swap(true) {
		return
	}
	ss.stop()
	ss.cancelCalls()
	ss.calls.Wait()
	close(ss.runner.stop)
	ss.srv.unregister(ss)
}

// running returns the number of tool calls running.
func (ss *Session) running() int { return len(ss.sem) }

// stop refuses new calls and ends the listen streams, which never end by
// themselves, so that their final results are written with the other
// responses.
func (ss *Session) stop() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stopping {
		return
	}
	ss.stopping = true
	close(ss.stopped)
	for _, c := range ss.inflight {
		if c.info.flags&stream != 0 {
			c.cancel()
		}
	}
}

// cancelCalls cancels every call in flight. Each call's context is its
// own, not derived from one the session cancels: calls would all register
// with, and contend for, that one parent.
func (ss *Session) cancelCalls() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.inflight {
		c.cancel()
	}
}

// notify sends a notification to out when the budget has room for it,
// and when queued, if given, is not set already (a notification of the
// same kind is still queued: one says as much as two). Otherwise it is
// dropped, and counted: a client that does not read must not make the
// bridge hold notifications without bound. It reports whether it sent.
func (ss *Session) notify(out Sink, msg []byte, queued *atomic.Bool) bool {
	if queued != nil && !queued.CompareAndSwap(false, true) {
		return false
	}
	if !ss.budget.tryTake(len(msg)) {
		if queued != nil {
			queued.Store(false)
		}
		if d := ss.dropped.Add(1); d&(d-1) == 0 { // a line at 1, 2, 4, 8, … dropped
			ss.log.Warn().Int64("dropped", d).Msg("client not reading: notifications dropped")
		}
		return false
	}
	ss.sendTaken(out, msg, queued, false)
	return true
}

// oneStream reports whether the session's messages to the client, the
// responses and its own requests, travel on one ordered stream (stdio),
// not on a stream per request (HTTP).
func (ss *Session) oneStream() bool { return ss.transport != "http" }

// notifyThen sends a notification to out when the budget has room for it,
// and calls released once it is written or dropped; it reports whether it
// sent. released runs on whatever goroutine writes the message, holding
// no lock of the session's.
func (ss *Session) notifyThen(out Sink, msg []byte, released func()) bool {
	if !ss.budget.tryTake(len(msg)) {
		if d := ss.dropped.Add(1); d&(d-1) == 0 { // a line at 1, 2, 4, 8, … dropped
			ss.log.Warn().Int64("dropped", d).Msg("client not reading: notifications dropped")
		}
		return false
	}
	n := len(msg)
	out.Send(msgOf(msg, func() {
		ss.budget.give(n)
		released()
	}))
	return true
}

// sendAlways sends a small notification the client must not miss (an
// acknowledgement, a change of a list), whatever room the budget has:
// with queued set while one of its kind is queued, their number is
// bounded too.
func (ss *Session) sendAlways(out Sink, msg []byte, queued *atomic.Bool) {
	if queued != nil && !queued.CompareAndSwap(false, true) {
		return
	}
	ss.budget.take(len(msg))
	ss.sendTaken(out, msg, queued, false)
}

// sendTaken sends msg, whose bytes the budget counts, and releases them
// (and clears queued) once it is written or dropped; request marks a
// request of the server's.
func (ss *Session) sendTaken(out Sink, msg []byte, queued *atomic.Bool, request bool) {
	n := len(msg)
	m := msgOf(msg, func() {
		ss.budget.give(n)
		if queued != nil {
			queued.Store(false)
		}
	})
	m.request = request
	out.Send(m)
}

// TooLong answers a message longer than the server's MaxMessageSize,
// which a transport reading a stream skipped: prefix is its start and
// tail its end. It is answered with its id, when the start shows it, or
// the end shows it as the object's last member; a response from the
// client, a notification, or a message whose id does not show, is not
// answered.
func (ss *Session) TooLong(out Sink, prefix, tail []byte) {
	max := orDefault(ss.srv.MaxMessageSize, DefaultMaxMessageSize)
	ss.log.Warn().Int("max_bytes", max).Msg("message too long")
	id, response := idFromPrefix(prefix)
	if id == nil {
		id = idAtEnd(tail)
	}
	if id != nil && !response {
		msg := fmt.Sprintf("message longer than %d bytes", max)
		if hint := ss.srv.MaxMessageSizeHint; hint != "" {
			msg += "; " + hint
		}
		h := ss.budget.newHold()
		ss.reply(nil, &request{id: id, out: out, hold: h}, errorMsg(id, &Error{Code: CodeInvalidRequest, Message: msg}))
	}
}

// handleLine handles one line: a message or a batch, whose responses go
// to out. h counts the line's bytes, until the request is answered.
func (ss *Session) handleLine(ctx context.Context, out Sink, line []byte, h *hold) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		h.finish()
		return
	}
	if line[0] == '[' {
		ss.handleBatch(ctx, out, line, h)
		return
	}
	rq, ignore, errID, err := decodeMessage(line)
	rq.out, rq.hold = out, h
	switch {
	case err != nil:
		ss.log.Debug().Err(err).Msg("bad message")
		ss.reply(nil, &rq, errorMsg(errID, WireError(err)))
	case ignore:
		ss.log.Debug().Msg("ignoring a response or an unreadable notification from the client")
		rq.hold.finish()
	case rq.reply != nil:
		ss.routeReply(rq.id, *rq.reply)
		rq.hold.finish()
	default:
		ss.dispatch(ctx, &rq, nil)
	}
}
