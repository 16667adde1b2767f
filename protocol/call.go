package protocol

import (
	"context"
	"errors"
	"math"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// PrincipalKind says what identifies a Principal.
type PrincipalKind string

// The kinds of principal, from the most specific: a transport names the
// first it knows.
const (
	// PrincipalClient is a named client, with its own policy.
	PrincipalClient PrincipalKind = "client"
	// PrincipalToken is whoever holds one bearer token; its ID is a
	// digest of the token, never the token.
	PrincipalToken PrincipalKind = "token"
	// PrincipalSession is one legacy session; its ID is the session's id
	// in the audit log.
	PrincipalSession PrincipalKind = "session"
	// PrincipalConnection is one HTTP connection (a modern request
	// without a token); its ID is the connection's remote address.
	PrincipalConnection PrincipalKind = "connection"
	// PrincipalProcess is whoever started the process: the client at the
	// other end of stdio, or a command of the process itself.
	PrincipalProcess PrincipalKind = "process"
	// PrincipalLocal is whoever reaches an HTTP bridge without a token,
	// on loopback or its Unix socket: the local user. It owns the tasks
	// of such requests, which outlive their connections and sessions.
	PrincipalLocal PrincipalKind = "local"
)

// Principal is who a request is for: what fair shares, tasks and rights
// are keyed on, and what the audit log records. Principals are equal
// when they are the same one.
type Principal struct {
	Kind PrincipalKind
	// ID tells principals of one kind apart; "" for the process.
	ID string
}

// String returns the principal as the audit log writes it: "process",
// or its kind and ID, such as "token:3f9a0c1d2e4b5a6f".
func (p Principal) String() string {
	if p.ID == "" {
		return string(p.Kind)
	}
	return string(p.Kind) + ":" + p.ID
}

// ClientInfo is what a client calls itself: the clientInfo of
// initialize, or in the modern era of the request's _meta. Its strings
// are the client's own, unchecked.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ErrNotSupported is the error of a Call's request to its client that
// cannot be made here: the client cannot ask (CanConfirm), or the request
// cannot ask in the middle (completion/complete).
var ErrNotSupported = errors.New("not supported here")

// Call is one request as the providers see it, and everything it may do
// towards its client: who it is for (its principal, its client, its
// session), its hold on the byte budget, logging to the client, reporting
// progress, and asking the user, the client's model, or the client's
// roots. The server makes one for each request it hands to a provider,
// and a provider passes it on, as a parameter, to whatever reads or waits
// on the request's behalf (the backend client counts a reply's bytes with
// Grow, and hands what the backend says meanwhile to Progress, Log,
// Elicit, Sample and Roots): nothing of it travels in a context. NewCall
// makes one for a request made outside a session.
//
// In protocol 2026-07-28 a call that asks the client something outlives
// its request: the request is answered input_required, and the client's
// retry takes the call over (see the server's parked calls). The call's
// messages then go to the retry.
//
// A Call's methods are safe for concurrent use. It is valid until its
// provider method returns.
type Call struct {
	srv       *Server // nil for a call made by NewCall
	principal Principal
	client    ClientInfo
	version   string
	modernEra bool
	caps      clientCaps // what the client said it can be asked

	// What the client's policy keeps the provider from asking, and who
	// answers what the client cannot (SessionOptions.AskOwner).
	denySampling, denyElicitation bool
	owner                         Owner

	transport, sessionID string // of a call made by NewCall

	// The ways to ask the user to confirm: confirm, or in the modern era
	// the request's own answer (modern); neither when the client cannot.
	confirm Asker
	modern  *modernAsk

	// logTo receives the log messages of a call made by NewCall.
	logTo func(level LogLevel, logger string, data any)

	mu sync.Mutex // guards what follows; never held while sending
	at attachment // the request the call answers now; none while parked

	logsQueued  int              // log messages queued, not yet written
	dropped     int              // notifications dropped for want of room, or past their bounds
	timers      []*pausedTimeout // the call's own time, which stops while it asks (WithTimeout)
	asking      int              // questions waiting for their answers
	askingOwner int              // of which on the owner's console
	backendAsks int              // of which the provider's own
	round       int              // the input_required results the call has answered

	// In the modern era: the questions waiting for an answer, by name;
	// the request's answers not taken yet, by name; and asked, which
	// wakes the request's handler when a question comes.
	questions map[string]*question
	answers   map[string]jsontext.Value
	asked     chan struct{}
	park      *parked // the call's life after its request, once it asks

	// tk is what a call that may run as a task, or is one, keeps of it;
	// nil for any other call (see taskcall.go). Set before its provider
	// runs; its fields are guarded by mu.
	tk *callTask
}

// attachment is the request a Call answers now: where its messages go,
// and what counts the bytes it holds.
type attachment struct {
	ss       *Session
	rq       *request
	hold     *hold     // nil: nothing is counted
	progress *progress // the request's progress, when it carried a token; nil without one
}

// CallOptions describe a request made outside a session, for NewCall.
type CallOptions struct {
	// Principal is who the request is for; the zero value means the
	// process.
	Principal Principal
	// Client names the program making the request.
	Client ClientInfo
	// Transport says how it reached the bridge, such as "cli"; SessionID
	// the session it belongs to, if any, for the records.
	Transport, SessionID string
	// ProtocolVersion is the version whose shapes the provider uses
	// (default LatestLegacyVersion).
	ProtocolVersion string
	// Ask asks the user to confirm; nil when nobody can be asked.
	Ask Asker
	// Log receives the call's log messages to its client; nil drops them.
	Log func(level LogLevel, logger string, data any)
}

// NewCall returns the Call of a request made outside a session, such as
// a command of the process calling one tool. It counts no bytes against
// any budget, and asks nothing of a client but the confirmations Ask
// answers.
func NewCall(o CallOptions) *Call {
	if o.Principal.Kind == "" {
		o.Principal = Principal{Kind: PrincipalProcess}
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = LatestLegacyVersion
	}
	return &Call{
		principal: o.Principal,
		client:    o.Client,
		version:   o.ProtocolVersion,
		modernEra: IsModernVersion(o.ProtocolVersion),
		confirm:   o.Ask,
		logTo:     o.Log,
		transport: o.Transport,
		sessionID: o.SessionID,
	}
}

// Principal returns who the request is for.
func (c *Call) Principal() Principal { return c.principal }

// Client returns what the client calls itself; empty when it said
// nothing.
func (c *Call) Client() ClientInfo { return c.client }

// SessionID identifies the client's session within the process, for the
// records.
func (c *Call) SessionID() string {
	if ss := c.attached().ss; ss != nil {
		return ss.id
	}
	return c.sessionID
}

// Transport names how the client is connected: "stdio", "http", or what
// NewCall was told.
func (c *Call) Transport() string {
	if ss := c.attached().ss; ss != nil {
		return ss.transport
	}
	return c.transport
}

// ProtocolVersion returns the protocol version in force for the request.
func (c *Call) ProtocolVersion() string { return c.version }

// attached returns the request the call answers now.
func (c *Call) attached() attachment {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// Grow counts n more bytes held for the request against its session's
// budget and its server's, waiting while there is no room for them (see
// hold.Grow). It fails only when ctx ends first.
func (c *Call) Grow(ctx context.Context, n int) error { return c.attached().hold.Grow(ctx, n) }

// Shrink gives back n of the bytes Grow counted, no longer held.
func (c *Call) Shrink(n int) { c.attached().hold.shrink(n) }

// Most log messages of one call queued for its client, not yet written:
// past it, a backend that logs faster than the client reads loses
// messages, and holds up no other call.
const maxLogsQueued = 64

// Log sends a log message about the request to its client, when the
// client asked for messages of this level: in the legacy era through
// logging/setLevel, in the modern era through the request's own _meta
// logLevel (without it, nothing is sent). data is any JSON-encodable
// value. A client that does not read loses log messages, never more.
func (c *Call) Log(level LogLevel, logger string, data any) {
	if c.srv == nil {
		if c.logTo != nil {
			c.logTo(level, logger, data)
		}
		return
	}
	c.mu.Lock()
	at := c.at
	// A task's log messages have no request to go with: MCP's tasks carry
	// none.
	if at.ss == nil || c.logsQueued >= maxLogsQueued || c.tk != nil && c.tk.task != nil {
		c.dropped++
		c.mu.Unlock()
		return
	}
	min := LogLevel(at.ss.logLevel.Load())
	if at.rq.modern {
		min = at.rq.logLevel
	}
	if level < min {
		c.mu.Unlock()
		return
	}
	c.logsQueued++
	c.mu.Unlock()
	d, err := json.Marshal(data, encodeOpts)
	if err != nil {
		d, _ = json.Marshal(err.Error(), encodeOpts)
	}
	msg := encodeNotification("notifications/message", &logParams{Level: level.String(), Logger: logger, Data: d})
	if !at.ss.notifyThen(at.rq.out, msg, c.logWritten) {
		c.logWritten()
		c.countDropped()
	}
}

func (c *Call) logWritten() {
	c.mu.Lock()
	c.logsQueued--
	c.mu.Unlock()
}

func (c *Call) countDropped() {
	c.mu.Lock()
	c.dropped++
	c.mu.Unlock()
}

// NotificationsDropped returns how many notifications about the call
// were not sent to its client so far: progress not above the last value
// sent, log messages past their bound, and either when the client did
// not read them. Progress coalesced while the client reads (a later value
// sent instead) is not counted.
func (c *Call) NotificationsDropped() int {
	c.mu.Lock()
	n, pr := c.dropped, c.at.progress
	c.mu.Unlock()
	if pr != nil {
		pr.mu.Lock()
		n += pr.dropped
		pr.mu.Unlock()
	}
	return n
}

// Progress reports the request's progress to its client, when the request
// carried a progress token and value is above the last one sent for it
// (MCP requires progress to increase); total, when positive, is the value
// at which the work is done. The first progress a provider reports stops
// the server's heartbeats. Progress the client has not read yet is
// coalesced: once the last notification is written, only the latest
// value follows. It reports whether the progress will reach the client.
//
// The first progress of a call that may run as a task makes it one (see
// startGate); a task's progress becomes its statusMessage instead.
func (c *Call) Progress(value, total float64, message string) bool {
	if value <= 0 || math.IsNaN(value) || math.IsInf(value, 0) {
		return false
	}
	if tk := c.tk; tk != nil {
		c.mu.Lock()
		t, open := tk.task, tk.openGate
		if t == nil {
			tk.progress = &progressParams{Progress: value, Total: total, Message: message}
		}
		c.mu.Unlock()
		if open != nil {
			open()
		}
		if t != nil {
			t.progress(value, total, message)
			return false
		}
	}
	return c.attached().sendProgress(value, total, message, true)
}

// flushProgress sends the latest progress reported while the last was
// queued, now: the provider is done, and the response follows it.
func (c *Call) flushProgress() { c.attached().flushProgress() }

// progress is what a request has sent of its progress: every Call that
// answers the request (its own, a parked one it took over, the
// heartbeats) counts on it, so that the values the client gets increase.
type progress struct {
	token jsontext.Value

	mu           sync.Mutex
	last         float64         // the last value sent
	fromProvider bool            // the provider reports progress: the heartbeats stop
	queued       bool            // a notification is queued, not yet written
	next         *progressParams // the latest, sent once the queued one is written
	dropped      int             // values not sent: not increasing, or no room
	// ended is set once the response is on its way: no notification may
	// follow it. sending counts the writer's sends of next under way
	// outside mu, which ending waits for (on idle, a Cond on mu).
	ended   bool
	sending int
	idle    sync.Cond
}

func newProgress(token jsontext.Value) *progress {
	pr := &progress{token: token}
	pr.idle.L = &pr.mu
	return pr
}

// sendProgress sends progress for the request of at: value, or with
// value 0 the next whole number above the last value sent, a heartbeat's
// (fromProvider false), which stops once the provider reports progress
// itself.
func (at attachment) sendProgress(value, total float64, message string, fromProvider bool) bool {
	pr := at.progress
	if at.ss == nil || pr == nil {
		return false
	}
	pr.mu.Lock()
	switch {
	case pr.ended:
		pr.mu.Unlock()
		return false
	case fromProvider:
		pr.fromProvider = true
	case pr.fromProvider:
		pr.mu.Unlock()
		return false
	}
	if value == 0 {
		value = math.Floor(pr.last) + 1
	}
	if value <= pr.last {
		pr.dropped++
		pr.mu.Unlock()
		return false
	}
	pr.last = value
	p := &progressParams{ProgressToken: pr.token, Progress: value, Total: max(total, 0), Message: message}
	if pr.queued {
		pr.next = p // the latest says all the others would
		pr.mu.Unlock()
		return true
	}
	pr.queued = true
	pr.mu.Unlock()
	return at.emitProgress(p)
}

// emitProgress sends p; once it is written, the latest progress reported
// meanwhile follows.
func (at attachment) emitProgress(p *progressParams) bool {
	pr := at.progress
	written := func() {
		pr.mu.Lock()
		next := pr.next
		if next == nil || pr.ended { // once ended, flushProgress sends the latest
			pr.queued = false
			pr.mu.Unlock()
			return
		}
		pr.next = nil
		pr.sending++
		pr.mu.Unlock()
		at.emitProgress(next)
		pr.mu.Lock()
		if pr.sending--; pr.sending == 0 {
			pr.idle.Broadcast()
		}
		pr.mu.Unlock()
	}
	if at.ss.notifyThen(at.rq.out, encodeNotification("notifications/progress", p), written) {
		return true
	}
	pr.mu.Lock()
	pr.queued = false
	pr.dropped++
	pr.mu.Unlock()
	return false
}

// flushProgress sends the latest progress reported while the last was
// queued, now, ahead of the response; after it no progress is sent for
// the request. A send the writer has under way (of the latest, once the
// one before is written) is waited for: otherwise it could follow the
// response.
func (at attachment) flushProgress() {
	pr := at.progress
	if at.ss == nil || pr == nil {
		return
	}
	pr.mu.Lock()
	pr.ended = true
	for pr.sending > 0 {
		pr.idle.Wait() // the writer may write and release meanwhile: next stays ours (see emitProgress)
	}
	next := pr.next
	pr.next = nil
	pr.mu.Unlock()
	if next != nil {
		at.ss.notifyThen(at.rq.out, encodeNotification("notifications/progress", next), func() {})
	}
}

// CanConfirm reports whether the user can be asked to confirm through the
// client: the client declared form elicitation (or, outside a session,
// someone answers). When it cannot, Confirm asks the owner instead if
// the call AsksOwner.
func (c *Call) CanConfirm() bool {
	if c.srv == nil {
		return c.confirm != nil
	}
	return c.caps.canElicitForm() && c.versionElicits()
}

// versionElicits reports whether the call's protocol version has
// elicitation (2025-06-18 and later): a client of an older one is never
// sent elicitation/create, whatever it declared.
func (c *Call) versionElicits() bool {
	return c.modernEra || shapeOf(c.version) >= shapeStructured
}

// Confirm asks the user, through the client, a yes-or-no Question before
// the request goes on. It returns the user's answer; or ctx's error when
// ctx ends first (the question is then withdrawn); or an error wrapping
// ErrNotSupported when the client cannot ask (see CanConfirm) and the
// call does not ask the owner instead (AsksOwner). The owner's answer
// comes back as the user's; when no one is at the owner's console, the
// error wraps ErrOwnerAway (with CodeMissingCapability). No more
// than the server's AskTimeout is spent waiting (then an *Error with
// CodeRequestTimeout), and that time does not count against WithTimeout.
//
// In protocol 2026-07-28 the question travels in the result: when the
// request does not carry the user's answer yet, Confirm keeps the question
// and returns ErrInputRequired, and the provider must stop there. Whatever
// it returns then, the server answers with an input_required result
// asking the question, and the client sends the request again with the
// answer.
func (c *Call) Confirm(ctx context.Context, q Question) (Answer, error) {
	switch {
	case c.srv == nil && c.confirm != nil:
		return c.confirm(ctx, q)
	case !c.CanConfirm() && !c.AsksOwner():
		return Answer{}, ErrNotSupported
	case c.modern != nil && c.confirmsInResult():
		return c.modern.ask(q)
	}
	raw, err := c.ask(ctx, confirmKey, "elicitation/create", confirmParams(q, c.version), false)
	if err != nil {
		return Answer{}, err
	}
	return answerOf(raw)
}

// confirmsInResult reports whether a 2026-07-28 confirmation goes in
// the request's result: not once the call is a task, whose questions are
// its own (then it asks as the backend does). A question it keeps for
// the result means no task until its request is answered; the answer,
// when the request carries it, lets the call become one as any other.
func (c *Call) confirmsInResult() bool {
	if c.tk == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tk.task != nil {
		return false
	}
	if c.modern.answer == nil {
		c.tk.asksFirst = true
	}
	return true
}

// pending returns the question Confirm kept for an input_required result,
// or nil.
func (c *Call) pending() *Question {
	if c.modern == nil {
		return nil
	}
	return c.modern.question
}

// Elicit asks the user, through the client, to fill in a form:
// elicitation/create with MCP's params (form mode), named name among the
// call's questions (the key of a 2026-07-28 input request). It returns
// the client's result, a declined or cancelled form included; or an
// *Error: CodeMissingCapability when the client did not declare form
// elicitation, CodeRequestTimeout after the server's AskTimeout (or when
// too many calls wait for answers), CodeRequestCancelled when the call
// ends first, or the client's own error. Its wait does not count against
// WithTimeout.
func (c *Call) Elicit(ctx context.Context, name string, params jsontext.Value) (jsontext.Value, error) {
	if c.denyElicitation {
		return nil, errDenied("ask the user to fill in a form")
	}
	return c.ask(ctx, name, "elicitation/create", params, true)
}

// Sample asks the client's model for a completion: sampling/createMessage
// with MCP's params, named name among the call's questions. It answers
// as Elicit does.
func (c *Call) Sample(ctx context.Context, name string, params jsontext.Value) (jsontext.Value, error) {
	if c.denySampling {
		return nil, errDenied("ask the client's model for a completion")
	}
	return c.ask(ctx, name, "sampling/createMessage", params, true)
}

// Roots asks the client for its roots (roots/list), named name among the
// call's questions. It answers as Elicit does.
func (c *Call) Roots(ctx context.Context, name string, params jsontext.Value) (jsontext.Value, error) {
	return c.ask(ctx, name, "roots/list", params, true)
}
