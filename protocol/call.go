package protocol

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"

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
// the client cannot answer: it declared no such capability, or the bridge
// does not offer the request yet.
var ErrNotSupported = errors.New("the client cannot be asked this")

// Call is one request as the providers see it, and everything it may do
// towards its client: who it is for (its principal, its client, its
// session), its hold on the byte budget, logging to the client, reporting
// progress, and asking the user or the client. The server makes one for
// each request it hands to a provider, and a provider passes it on, as a
// parameter, to whatever reads or waits on the request's behalf (the
// backend client counts a reply's bytes with Grow): nothing of it travels
// in a context. NewCall makes one for a request made outside a session.
//
// A Call's methods are safe for concurrent use. It is valid until its
// provider method returns.
type Call struct {
	ss                   *Session // nil for a call made by NewCall
	rq                   *request // nil for a call made by NewCall
	hold                 *hold    // nil: nothing is counted
	principal            Principal
	client               ClientInfo
	transport, sessionID string // of a call made by NewCall

	// The ways to ask the user to confirm: ask, or in the modern era the
	// request's own answer (modern); neither when the client cannot ask.
	ask    Asker
	modern *modernAsk

	// logTo receives the log messages of a call made by NewCall.
	logTo func(level LogLevel, logger string, data any)

	// progress is the request's progress token, nil without one; last
	// the last progress value sent for it.
	progress jsontext.Value
	mu       sync.Mutex
	last     float64
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
// any budget.
func NewCall(o CallOptions) *Call {
	if o.Principal.Kind == "" {
		o.Principal = Principal{Kind: PrincipalProcess}
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = LatestLegacyVersion
	}
	return &Call{
		rq:        &request{era: era{version: o.ProtocolVersion, modern: IsModernVersion(o.ProtocolVersion), logLevel: logOff}},
		principal: o.Principal,
		client:    o.Client,
		ask:       o.Ask,
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
	if c.ss == nil {
		return c.sessionID
	}
	return c.ss.id
}

// Transport names how the client is connected: "stdio", "http", or what
// NewCall was told.
func (c *Call) Transport() string {
	if c.ss == nil {
		return c.transport
	}
	return c.ss.transport
}

// ProtocolVersion returns the protocol version in force for the request.
func (c *Call) ProtocolVersion() string { return c.rq.version }

// Grow counts n more bytes held for the request against its session's
// budget and its server's, waiting while there is no room for them (see
// hold.Grow). It fails only when ctx ends first.
func (c *Call) Grow(ctx context.Context, n int) error { return c.hold.Grow(ctx, n) }

// Log sends a log message about the request to its client, when the
// client asked for messages of this level: in the legacy era through
// logging/setLevel, in the modern era through the request's own _meta
// logLevel (without it, nothing is sent). data is any JSON-encodable
// value. A client that does not read loses log messages, never more.
func (c *Call) Log(level LogLevel, logger string, data any) {
	if c.ss == nil {
		if c.logTo != nil {
			c.logTo(level, logger, data)
		}
		return
	}
	min := LogLevel(c.ss.logLevel.Load())
	if c.rq.modern {
		min = c.rq.logLevel
	}
	if level >= min {
		c.ss.sendLog(c.rq.out, level, logger, data)
	}
}

// Progress reports the request's progress to its client, when the request
// carried a progress token and value is above the last one sent for it
// (MCP requires progress to increase); total, when positive, is the value
// at which the work is done. It reports whether it sent the notification:
// one the client has no room for is dropped.
func (c *Call) Progress(value, total float64, message string) bool {
	if value <= 0 {
		return false
	}
	return c.sendProgress(value, total, message, nil)
}

// sendProgress sends notifications/progress with value, or with value 0
// the next whole number above the last value sent. queued, when set, is
// the flag of a heartbeat still queued (see Session.notify).
func (c *Call) sendProgress(value, total float64, message string, queued *atomic.Bool) bool {
	if c.ss == nil || c.progress == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if value == 0 {
		value = math.Floor(c.last) + 1
	}
	if value <= c.last {
		return false
	}
	c.last = value
	return c.ss.notify(c.rq.out, encodeNotification("notifications/progress", &progressParams{
		ProgressToken: c.progress, Progress: value, Total: max(total, 0), Message: message}), queued)
}

// CanConfirm reports whether the user can be asked to confirm: the client
// declared form elicitation (or, outside a session, someone answers).
func (c *Call) CanConfirm() bool { return c.ask != nil || c.modern != nil }

// Confirm asks the user, through the client, a yes-or-no Question before
// the request goes on. It returns the user's answer; or ctx's error when
// ctx ends first (the question is then withdrawn); or an error wrapping
// ErrNotSupported when the client cannot ask (see CanConfirm).
//
// In protocol 2026-07-28 the question travels in the result: when the
// request does not carry the user's answer yet, Confirm keeps the question
// and returns ErrInputRequired, and the provider must stop there. Whatever
// it returns then, the server answers with an input_required result
// asking the question, and the client sends the request again with the
// answer.
func (c *Call) Confirm(ctx context.Context, q Question) (Answer, error) {
	switch {
	case c.modern != nil:
		return c.modern.ask(q)
	case c.ask != nil:
		return c.ask(ctx, q)
	}
	return Answer{}, ErrNotSupported
}

// pending returns the question Confirm kept for an input_required result,
// or nil.
func (c *Call) pending() *Question {
	if c.modern == nil {
		return nil
	}
	return c.modern.question
}

// Sample asks the client's model for a completion (sampling/createMessage,
// with MCP's params). The bridge does not offer it yet: it returns
// ErrNotSupported.
func (c *Call) Sample(ctx context.Context, params jsontext.Value) (jsontext.Value, error) {
	if c.ss != nil && c.ss.denySampling {
		return nil, errDenied("ask the client's model for a completion")
	}
	return nil, ErrNotSupported
}

// Elicit asks the user, through the client, to fill in a form
// (elicitation/create, with MCP's params). The bridge does not offer it
// to providers yet: it returns ErrNotSupported.
func (c *Call) Elicit(ctx context.Context, params jsontext.Value) (jsontext.Value, error) {
	if c.ss != nil && c.ss.denyElicitation {
		return nil, errDenied("ask the user to fill in a form")
	}
	return nil, ErrNotSupported
}

// Roots asks the client for its roots (roots/list). The bridge does not
// offer it yet: it returns ErrNotSupported.
func (c *Call) Roots(ctx context.Context) (jsontext.Value, error) {
	return nil, ErrNotSupported
}
