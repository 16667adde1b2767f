package protocol

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// methodFlags say how a method is routed.
type methodFlags uint8

const (
	notification methodFlags = 1 << iota // a notification: never answered
	concurrent                           // may wait on the backend: runs on a goroutine of its own, within MaxInFlight
	stream                               // a long-lived stream: a goroutine of its own, within maxListens
	legacyOnly                           // not part of the modern protocol
	modernOnly                           // only in the modern protocol: needs its _meta
	cacheable                            // a modern result carries ttlMs and cacheScope
	stale                                // with cacheable: ttlMs is 0, the result may change at any time
)

// methodInfo is one row of the method table: how to decode the method's
// params and how to answer it.
type methodInfo struct {
	flags  methodFlags
	decode func(raw jsontext.Value, lenient bool) (params, error)
	handle func(ss *Session, ctx context.Context, rq *request, p params) (result, error)
}

// params are the typed params of a method: every method's carry _meta.
type params interface{ meta() *requestMeta }

// result is the typed result of a method: every method's may carry the
// modern tail.
type result interface{ tail() *resultTail }

// messageEncoder is a result that encodes its own response, such as one
// written in parts from the bytes the backend sent; any other result is
// encoded as it is.
type messageEncoder interface {
	encodeMessage(id jsontext.Value) (Message, error)
}

// metaParams is embedded in every method's params.
type metaParams struct {
	Meta requestMeta `json:"_meta"`
}

func (p *metaParams) meta() *requestMeta { return &p.Meta }

// noParams are the params of methods that read none but _meta.
type noParams struct{ metaParams }

// emptyResult is the result of methods that answer nothing.
type emptyResult struct{ resultTail }

// row makes a method table row from a typed handler.
func row[P any, R any, PP interface {
	*P
	params
}, RP interface {
	*R
	result
}](flags methodFlags, h func(*Session, context.Context, *request, PP) (RP, error)) methodInfo {
	return methodInfo{
		flags: flags,
		decode: func(raw jsontext.Value, lenient bool) (params, error) {
			p := PP(new(P))
			if raw != nil {
				if err := json.Unmarshal(raw, p, jsontext.AllowInvalidUTF8(lenient)); err != nil {
					return nil, err
				}
			}
			return p, nil
		},
		handle: func(ss *Session, ctx context.Context, rq *request, p params) (result, error) {
			r, err := h(ss, ctx, rq, p.(PP))
			if err != nil || r == nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// methods is the method table: the only place where routing lives.
// Methods that are not in it (other extensions) are answered -32601,
// notifications ignored.
var methods = map[string]methodInfo{
	"initialize":                row(legacyOnly, (*Session).initialize),
	"ping":                      row(legacyOnly, (*Session).ping),
	"logging/setLevel":          row(legacyOnly, (*Session).setLevel),
	"server/discover":           row(modernOnly|cacheable, (*Session).discover),
	"subscriptions/listen":      row(modernOnly|stream, (*Session).listen),
	"tools/list":                row(cacheable, (*Session).listTools),
	"tools/call":                row(concurrent, (*Session).callTool),
	"prompts/list":              row(cacheable, (*Session).listPrompts),
	"prompts/get":               row(concurrent, (*Session).getPrompt),
	"resources/list":            row(cacheable, (*Session).listResources),
	"resources/templates/list":  row(cacheable, (*Session).listTemplates),
	"resources/read":            row(concurrent|cacheable|stale, (*Session).readResource),
	"completion/complete":       row(concurrent, (*Session).complete),
	"tasks/get":                 row(0, (*Session).getTask),
	"tasks/cancel":              row(0, (*Session).cancelTask),
	"tasks/result":              row(legacyOnly|stream, (*Session).taskPayload), // waits for the task: a goroutine of its own
	"tasks/list":                row(legacyOnly, (*Session).listTasks),
	"tasks/update":              row(modernOnly, (*Session).updateTask),
	"notifications/initialized": row(notification, (*Session).initialized),
	"notifications/cancelled":   row(notification, (*Session).cancelled),
}

// dispatch routes one request or notification. Its response goes to
// rq.out, or into b when the request is part of a batch: for a batch,
// every element is answered exactly once, with nothing for those that
// get no response.
func (ss *Session) dispatch(ctx context.Context, rq *request, b *batch) {
	info, ok := methods[rq.method]
	if rq.id == nil {
		if !ok || info.flags&notification == 0 {
			ss.log.Debug().Str("method", rq.method).Msg("ignoring notification")
		} else if p, err := info.decode(rq.params, rq.lenient); err != nil {
			ss.log.Debug().Err(err).Str("method", rq.method).Msg("ignoring malformed notification")
		} else {
			_, _ = info.handle(ss, ctx, rq, p)
		}
		ss.reply(b, rq, Message{})
		return
	}
	if !ok || info.flags&notification != 0 {
		ss.reply(b, rq, ss.encode(rq, info, nil, fmt.Errorf("%w: no method %q", ErrMethodNotFound, rq.method)))
		return
	}
	p, err := info.decode(rq.params, rq.lenient)
	rq.params = nil // decoded into p: not held twice
	if err != nil {
		err = fmt.Errorf("%w: %s: %s", ErrInvalidParams, rq.method, describe(err))
		ss.reply(b, rq, ss.encode(rq, info, nil, err))
		return
	}
	if rq.era, err = ss.chooseEra(info.flags, rq.method, p.meta()); err != nil {
		ss.reply(b, rq, ss.encode(rq, info, nil, err))
		return
	}
	if info.flags&concurrent != 0 {
		if m, refused := ss.overRate(rq, info); refused {
			ss.reply(b, rq, m)
			return
		}
	}
	if info.flags&(concurrent|stream) != 0 {
		ss.startCall(ctx, rq, info, p, b)
		return
	}
	res, err := ss.handle(ctx, rq, info, p)
	ss.reply(b, rq, ss.encode(rq, info, res, err))
}

// handle runs a handler. A panic is the handler's bug, not the session's end:
// it is logged and answered as an internal error.
func (ss *Session) handle(ctx context.Context, rq *request, info methodInfo, p params) (res result, err error) {
	defer func() {
		if v := recover(); v != nil {
			ss.log.Error().Str("method", rq.method).Interface("panic", v).Bytes("stack", debug.Stack()).Msg("request handler panicked")
			res, err = nil, ErrInternal
		}
	}()
	return info.handle(ss, ctx, rq, p)
}

// encode encodes the response to rq: its result, in the era's shape, or
// its error.
func (ss *Session) encode(rq *request, info methodInfo, res result, err error) Message {
	if err == nil {
		ss.finishModern(res.tail(), rq, info.flags)
		var m Message
		if e, ok := res.(messageEncoder); ok {
			m, err = e.encodeMessage(rq.id)
		} else {
			var b []byte
			b, err = encodeResult(rq.id, res)
			m = msgOf(b, nil)
		}
		if err == nil {
			return m
		}
		err = fmt.Errorf("encoding the result: %w", err)
	}
	we := WireError(err)
	var coded *Error
	switch {
	case err == ErrInternal:
		// A handler's panic, logged where it was recovered.
	case we.Code == CodeInternalError && !errors.As(err, &coded):
		// An error nobody gave a code; one that has one (a backend's
		// trouble reading a resource) was logged where it was made.
		ss.log.Error().Err(err).Str("method", rq.method).Msg("request failed")
	default:
		ss.log.Debug().Err(err).Str("method", rq.method).Msg("request refused")
	}
	return errorMsg(rq.id, we)
}

// errorMsg is the error response to id.
func errorMsg(id jsontext.Value, e *Error) Message { return msgOf(encodeError(id, e), nil) }

// reply sends the response to rq (none when m has no parts) to rq.out, or
// into b. The request's bytes are held until the response is written.
func (ss *Session) reply(b *batch, rq *request, m Message) {
	switch {
	case b != nil:
		b.add(rq, m)
	case m.parts == nil: // no response, as for a call the client cancelled
		rq.out.Send(Message{hold: rq.hold, final: true})
	default:
		rq.hold.charge(m.uncounted())
		m.hold, m.final = rq.hold, true
		rq.out.Send(m)
	}
}

type initializeParams struct {
	metaParams
	ProtocolVersion *string        `json:"protocolVersion"`
	Capabilities    jsontext.Value `json:"capabilities"`
	ClientInfo      ClientInfo     `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    serverCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitzero"`
	resultTail
}

func (ss *Session) initialize(_ context.Context, _ *request, p *initializeParams) (*initializeResult, error) {
	if p.ProtocolVersion == nil {
		return nil, fmt.Errorf(`%w: initialize: "protocolVersion" is required`, ErrInvalidParams)
	}
	if ss.modernSeen.Load() {
		// The client already speaks the modern protocol here; initialize
		// is not part of it. Name the versions, as the spec asks, since a
		// confused client may show only this message.
		data, _ := json.Marshal(map[string][]string{"supported": supportedVersions()}, encodeOpts)
		return nil, &Error{Code: CodeMethodNotFound, Data: data,
			Message: "initialize is not part of protocol " + ModernVersion + ", which this client already uses here; send requests with _meta instead"}
	}
	if v := ss.version.Load(); v != nil {
		// A session is negotiated once: switching a running session to
		// another version would change what its calls get (batches,
		// structured content) under it.
		return nil, fmt.Errorf("%w: this session is already initialized, in protocol %s, which it keeps; start a new session for another", ErrInvalidRequest, *v)
	}
	requested := *p.ProtocolVersion
	v := requested
	if !IsLegacyVersion(v) {
		v = LatestLegacyVersion
	}
	ss.version.Store(&v)
	ss.client.Store(&p.ClientInfo)
	caps := capsOf(p.Capabilities)
	ss.caps.Store(&caps)
	ev := ss.log.Info().Str("requested", requested).Str("protocol_version", v)
	// The client's strings are the client's: logged short, valid and on one line.
	ev = ev.Str("client", safetext.Field(p.ClientInfo.Name, maxLogged)).Str("client_version", safetext.Field(p.ClientInfo.Version, maxLogged))
	ev.Msg("initialize")
	return &initializeResult{
		ProtocolVersion: v,
		Capabilities:    ss.capabilities(shapeOf(v), false),
		ServerInfo:      ss.srv.Info.shaped(shapeOf(v)),
		Instructions:    ss.srv.Instructions,
	}, nil
}

func (ss *Session) ping(context.Context, *request, *noParams) (*emptyResult, error) {
	return &emptyResult{}, nil
}

type setLevelParams struct {
	metaParams
	Level *string `json:"level"`
}

func (ss *Session) setLevel(_ context.Context, _ *request, p *setLevelParams) (*emptyResult, error) {
	if p.Level == nil {
		return nil, fmt.Errorf(`%w: logging/setLevel: "level" is required`, ErrInvalidParams)
	}
	l, err := ParseLogLevel(*p.Level)
	if err != nil {
		return nil, err
	}
	ss.logLevel.Store(int32(l))
	return &emptyResult{}, nil
}

func (ss *Session) initialized(context.Context, *request, *noParams) (*emptyResult, error) {
	ss.log.Debug().Msg("client initialized")
	return nil, nil
}

type cancelledParams struct {
	metaParams
	RequestID jsontext.Value `json:"requestId"`
}

// cancelled handles notifications/cancelled: the call gets no response.
func (ss *Session) cancelled(_ context.Context, _ *request, p *cancelledParams) (*emptyResult, error) {
	if !validID(p.RequestID) {
		ss.log.Debug().Msg("ignoring malformed notifications/cancelled")
		return nil, nil
	}
	ss.mu.Lock()
	c := ss.inflight[string(p.RequestID)]
	ss.mu.Unlock()
	if c != nil { // else finished already, or never existed: the spec says ignore
		c.cancelled.Store(true)
		c.cancel()
	}
	return nil, nil
}
