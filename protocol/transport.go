package protocol

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"
)

// Session is one client's session with a Server, for a transport that
// carries each message on its own, such as HTTP; Serve makes its own for a
// stream. Requests handled in it share its protocol version, log level,
// calls in flight and budget. Its methods are safe for concurrent use.
type Session struct {
	ss     *session
	closed atomic.Bool
}

// NewSession starts a session whose messages that belong to no request
// (list changes, log messages) go to out. transport names how the client
// is connected ("http"), for the tool provider's records. The caller ends
// it with Close.
func (s *Server) NewSession(transport string, out Sink) *Session {
	log := zerolog.Nop()
	if s.Logger != nil {
		log = *s.Logger
	}
	c := &Session{ss: s.newSession(out, log)}
	c.ss.transport = transport
	s.register(c.ss)
	return c
}

// Handle handles msg, one message or a 2025-03-26 batch, as the session
// does a line of its stream: the response, and the notifications and
// requests about it before it, go to out. It returns once the message is
// dispatched; the calls it starts run on, bounded by ctx, which a
// transport cancels when the client is gone for good. msg's bytes are
// counted against the session's budget until answered; Handle waits
// first while the budget is full, unless ctx ends.
func (c *Session) Handle(ctx context.Context, msg []byte, out Sink) error {
	if c.closed.Load() {
		return ErrSessionClosed
	}
	if !c.ss.budget.waitRoom(ctx, c.ss.stopped) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ErrSessionClosed
	}
	c.ss.handleLine(ctx, out, msg)
	return nil
}

// ErrSessionClosed is Handle's refusal of a message to a closed session.
var ErrSessionClosed = errors.New("protocol: session closed")

// Busy reports whether the session has requests in flight: calls, listen
// streams, or requests of its own waiting for the client.
func (c *Session) Busy() bool {
	c.ss.mu.Lock()
	defer c.ss.mu.Unlock()
	return len(c.ss.inflight) > 0
}

// ProtocolVersion returns the version the session negotiated, or "" before
// initialize.
func (c *Session) ProtocolVersion() string {
	if v := c.ss.version.Load(); v != nil {
		return *v
	}
	return ""
}

// Close ends the session: it takes no more messages, its listen streams
// end and its calls are cancelled, each still answered to its sink. It
// returns once every call has returned. Closing twice is harmless.
func (c *Session) Close() {
	if c.closed.Swap(true) {
		return
	}
	ss := c.ss
	ss.stop()
	ss.cancelCalls()
	ss.calls.Wait()
	close(ss.runner.stop)
	ss.srv.unregister(ss)
}

// Drain stops the session taking new calls and ends its listen streams,
// which answer their final results; calls in flight go on. A transport
// drains its sessions when it shuts down, before it closes them.
func (c *Session) Drain() { c.ss.stop() }

// Envelope is what a transport may need to know of a message before it
// hands it to a session: its kind, method and the params it routes by.
type Envelope struct {
	// Method is the request's or notification's method; "" for a
	// response from the client.
	Method string
	// Request reports a message that gets a response: a request, or a
	// batch holding one.
	Request bool
	// ID is a request's id, as sent.
	ID jsontext.Value
	// Batch reports a JSON array of messages.
	Batch bool
	// Name is params.name (tools/call, prompts/get) or params.uri
	// (resources/read).
	Name string
	// ProtocolVersion is params._meta's io.modelcontextprotocol/protocolVersion.
	ProtocolVersion string
	// MetaErr is, for a request whose ProtocolVersion is a modern one,
	// why the rest of its _meta is malformed (-32602), or nil. Handle
	// answers such a request with this error; HTTP answers it 400 Bad
	// Request, so it needs to know first.
	MetaErr error
}

// Inspect reads msg's envelope, with the rules Handle uses. An error is
// one the message's response would carry: the message is not JSON, not a
// JSON-RPC message, or has invalid params.
func Inspect(msg []byte) (Envelope, error) {
	var env Envelope
	if msg = bytes.TrimSpace(msg); len(msg) > 0 && msg[0] == '[' {
		var elems []jsontext.Value
		if err := json.Unmarshal(msg, &elems, lenient, jsontext.AllowDuplicateNames(true)); err != nil {
			return env, &Error{Code: CodeParseError, Message: describe(err)}
		}
		env.Batch = true
		for _, e := range elems {
			rq, ignore, _, err := decodeMessage(e)
			if err != nil || !ignore && rq.reply == nil && rq.id != nil {
				env.Request = true
			}
		}
		return env, nil
	}
	rq, ignore, _, err := decodeMessage(msg)
	if err != nil {
		return env, WireError(err)
	}
	if ignore || rq.reply != nil {
		return env, nil // a response, or a notification MCP cannot read
	}
	env.Method, env.Request, env.ID = rq.method, rq.id != nil, rq.id
	if rq.params != nil {
		var p struct {
			Name string      `json:"name"`
			URI  string      `json:"uri"`
			Meta requestMeta `json:"_meta"`
		}
		opts := json.JoinOptions(jsontext.AllowInvalidUTF8(rq.lenient), json.RejectUnknownMembers(false))
		if err := json.Unmarshal(rq.params, &p, opts); err == nil {
			env.Name, env.ProtocolVersion = p.Name, p.Meta.ProtocolVersion
			if env.Method == "resources/read" {
				env.Name = p.URI
			}
			if IsModernVersion(env.ProtocolVersion) {
				_, env.MetaErr = p.Meta.checkModern(env.Method)
			}
		}
	}
	return env, nil
}

// register adds ss to the sessions that notifications reach.
func (s *Server) register(ss *session) {
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = make(map[*session]struct{})
	}
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) unregister(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}
