// Package mcphttp serves a protocol.Server over MCP's Streamable HTTP
// transport, in both eras on one endpoint: legacy sessions (2025-03-26 to
// 2025-11-25: Mcp-Session-Id, a GET stream, DELETE) and modern stateless
// requests (2026-07-28: MCP-Protocol-Version and Mcp-Method headers on
// every POST). It is a thin layer: every message goes to a
// protocol.Session, which owns the method table, the limits and the byte
// budget; the handler moves bytes, keeps the sessions and guards the
// endpoint (see Guard).
package mcphttp

import (
	"errors"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxSessions    = 64
	DefaultSessionTimeout = 30 * time.Minute
	DefaultMaxBodySize    = 4 << 20
	DefaultStallTimeout   = 10 * time.Second
	DefaultKeepAlive      = 25 * time.Second
	DefaultMaxStreams     = 256
	DefaultMaxConnections = 256
)

// inlineBody is the largest response written with its length said; a
// larger one (a large result) is streamed in chunks from where it lies.
const inlineBody = 64 << 10

// Path is the MCP endpoint's path; HealthPath the health check's.
const (
	Path       = "/mcp"
	HealthPath = "/healthz"
)

// Options configures a Handler. Zero fields mean the defaults.
type Options struct {
	// Guard decides who may use the endpoint.
	Guard Guard
	// MaxSessions bounds the legacy sessions (default 64). When a new one
	// is asked for, the one idle the longest is ended; if every session
	// is busy (a POST awaiting its answer, a GET stream open, or calls in
	// flight), the request is refused with 503.
	MaxSessions int
	// SessionTimeout ends a legacy session that no request has used for
	// this long, a POST awaiting its answer and an open GET stream being
	// use (default 30 min). Its calls still in flight, whose clients are
	// gone, are cancelled.
	SessionTimeout time.Duration
	// MaxBodySize bounds a request body in bytes (default 4 MiB); past
	// it the answer is 413.
	MaxBodySize int64
	// StallTimeout bounds a client's progress reading a response or an
	// event stream (default 10 s): it must read 64 KiB of it, or all
	// there is, within the timeout, and again for the next 64 KiB. A
	// client that reads less, or stops, loses that response or stream
	// (its connection closes); one that keeps reading never does,
	// however long the whole takes.
	StallTimeout time.Duration
	// KeepAlive is the period of comments on an idle event stream
	// (default 25 s).
	KeepAlive time.Duration
	// MaxStreams bounds the modern subscriptions/listen streams open at
	// once (default 256); past it the answer is 503.
	MaxStreams int
	// MaxConnections bounds the connections open at once to the HTTP
	// servers given to CountConnections (default 256): a connection
	// opened past it gets 503 and is closed. With one request read at a
	// time on each (HTTP/1.1), it bounds the request bodies being read.
	MaxConnections int
	// Health, when set, returns the body of /healthz (any JSON value);
	// it must tell nothing secret.
	Health func() any
	// Logger receives the handler's logs; nil means none.
	Logger *zerolog.Logger
}

// Handler is the http.Handler of the MCP endpoint and the health check.
// Its methods are safe for concurrent use.
type Handler struct {
	srv      *protocol.Server
	opts     Options
	log      zerolog.Logger
	sessions sessions
	conns    conns
	stop     chan struct{} // closed by Shutdown
	swept    chan struct{} // closed when the sweeper has returned

	mu       sync.Mutex
	draining bool
	active   sync.WaitGroup               // requests being served; Add under mu
	modern   map[*protocol.Session]Client // the sessions of modern requests being served, and their named client (or nil)
	streams  int                          // modern listen streams open
}

// NewHandler returns a handler serving srv. The caller ends it with
// Shutdown.
func NewHandler(srv *protocol.Server, opts Options) *Handler {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.MaxSessions, DefaultMaxSessions)
	def(&opts.MaxStreams, DefaultMaxStreams)
	def(&opts.MaxConnections, DefaultMaxConnections)
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.MaxBodySize <= 0 {
		opts.MaxBodySize = DefaultMaxBodySize
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = DefaultStallTimeout
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	h := &Handler{srv: srv, opts: opts, log: zerolog.Nop(), stop: make(chan struct{}), swept: make(chan struct{}),
		sessions: sessions{max: opts.MaxSessions, byID: map[string]*session{}}, modern: map[*protocol.Session]Client{},
		conns: conns{max: opts.MaxConnections, open: map[net.Conn]struct{}{}}}
	if opts.Logger != nil {
		h.log = *opts.Logger
	}
	go h.sweep() // ends at Shutdown
	return h
}

// ServeHTTP serves the MCP endpoint and the health check.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Context().Value(overLimit{}) != nil {
		w.Header().Set("Connection", "close")
		refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "too many connections open; try again later")
		return
	}
	switch r.URL.Path {
	case Path:
	case HealthPath:
		h.health(w, r)
		return
	default:
		http.NotFound(w, r)
		return
	}
	d := h.opts.Guard.Check(r, true)
	if d.Status != 0 {
		h.log.Warn().Int("status", d.Status).Str("reason", d.Reason).Str("remote", r.RemoteAddr).Msg("request refused")
		if d.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tairseach-mcp"`)
		}
		refuse(w, d.Status, protocol.CodeInvalidRequest, d.Reason)
		return
	}
	if !h.enter() {
		refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "the server is shutting down")
		return
	}
	defer h.active.Done()
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, d.Client)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuse(w, http.StatusMethodNotAllowed, protocol.CodeInvalidRequest, r.Method+" is not served here")
	}
}

// enter counts a request as active, unless the handler is shutting down.
func (h *Handler) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return false
	}
	h.active.Add(1)
	return true
}

// post serves a POST: one message, or a 2025-03-26 batch; c is the named
// client it is for, or nil.
func (h *Handler) post(w http.ResponseWriter, r *http.Request, c Client) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		refuse(w, http.StatusUnsupportedMediaType, protocol.CodeInvalidRequest, "Content-Type must be application/json")
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		refuse(w, http.StatusNotAcceptable, protocol.CodeInvalidRequest, "Accept must list application/json and text/event-stream")
		return
	}
	// The body's bytes are counted as they are read, until its request is
	// answered; a body refused is released when the refusal is written.
	res := h.srv.Reserve()
	defer res.Release() // spent once handled
	body, err := h.readBody(w, r, res)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		refuse(w, http.StatusRequestEntityTooLarge, protocol.CodeInvalidRequest, "request body larger than the server's limit")
		return
	case errors.Is(err, errBodyWait):
		w.Header().Set("Connection", "close") // the body is left unread
		refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "too many request bodies being read; try again later")
		return
	case err != nil:
		refuse(w, http.StatusBadRequest, protocol.CodeInvalidRequest, "reading the request body: "+err.Error())
		return
	}
	env, err := protocol.Inspect(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, nil, protocol.WireError(err))
		return
	}
	// A legacy version, or none, is a legacy request unless its body says
	// otherwise; any other version is answered as the modern era does.
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !protocol.IsLegacyVersion(v) || v == "" && protocol.IsModernVersion(env.ProtocolVersion) {
		h.postModern(w, r, body, res, env, c)
		return
	}
	h.postLegacy(w, r, body, res, env, c)
}

// postModern serves a POST of the modern era: a request on its own, with
// the headers that mirror its body checked first. res counts the body; c
// is the named client it is for, or nil.
func (h *Handler) postModern(w http.ResponseWriter, r *http.Request, body []byte, res *protocol.Reservation, env protocol.Envelope, c Client) {
	if err := checkHeaders(r, env); err != nil {
		writeError(w, http.StatusBadRequest, env.ID, err)
		return
	}
	o := sessionOptions(r, c)
	if env.Method == "tools/call" {
		// Against the current list: a client that mirrors an older one is
		// refused, and lists the tools again, as the specification says.
		if err := checkParamHeaders(r.Header, h.tools(o).Tools().ParamHeaders(env.Name), body); err != nil {
			writeError(w, http.StatusBadRequest, env.ID, err)
			return
		}
	}
	if !h.admit(w, c, env) {
		return
	}
	listen := env.Method == "subscriptions/listen"
	if listen && !h.openStream() {
		refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "too many open subscriptions/listen streams; try again later")
		return
	}
	if o.Principal.Kind == "" { // without a token: the connection
		o.Principal = protocol.Principal{Kind: protocol.PrincipalConnection, ID: r.RemoteAddr}
	}
	ps := h.srv.NewSession(dropping{}, o)
	if !h.track(ps, c) {
		ps.Close()
		refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "the server is shutting down")
		return
	}
	defer func() {
		ps.Close()
		h.untrack(ps)
		if listen {
			h.closeStream()
		}
	}()
	mb := newMailbox()
	defer mb.close()
	// Closing the response stream cancels the request, as 2026-07-28 says.
	if err := ps.HandleReserved(r.Context(), body, mb, res); err != nil {
		return // the client is gone
	}
	if !env.Request {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.respond(w, r, mb, true, nil)
}

// respond writes the response to a request: as one JSON object when it is
// the only message, or as an event stream when notifications (progress,
// log messages, requests of the server's) come first, or when the request
// ended without a response (the client cancelled it): then the stream
// ends without one. header, when set, adds headers before the status is
// written.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, mb *mailbox, modern bool, header func(http.Header)) {
	select {
	case <-mb.wake:
	case <-r.Context().Done():
		return // gone: the mailbox closes, and drops what comes
	}
	msgs := mb.drain()
	if len(msgs) == 1 && msgs[0].Final() && msgs[0].Size() > 0 {
		m := &msgs[0]
		defer m.Release()
		if header != nil {
			header(w.Header())
		}
		w.Header().Set("Content-Type", "application/json")
		var body []byte
		if m.Size() <= inlineBody {
			// Its length said: one write, without chunks.
			body = m.Bytes()
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(statusOf(m, modern))
		sw := newStallWriter(w, h.opts.StallTimeout)
		var err error
		if body != nil {
			_, err = sw.Write(body)
		} else {
			_, err = m.WriteTo(sw) // a large result, streamed from the backend's bytes
		}
		if err == nil {
			// On the wire before the handler returns: a shutdown may close
			// the connection as soon as every handler has.
			err = sw.Flush()
		}
		if err != nil {
			h.log.Debug().Err(err).Msg("response not written")
		}
		return
	}
	s := startSSE(w, h.opts.StallTimeout, header)
	err := func() error {
		for i := range msgs {
			if err := s.event(&msgs[i]); err != nil {
				release(msgs[i+1:])
				return err
			}
			if msgs[i].Final() {
				release(msgs[i+1:])
				return s.flush()
			}
		}
		if err := s.flush(); err != nil {
			return err
		}
		return pump(r.Context(), nil, mb, s, h.opts.KeepAlive, (*protocol.Message).Final)
	}()
	if err != nil && !errors.Is(err, errGone) {
		h.log.Debug().Err(err).Msg("event stream ended")
	}
}

// sessionOptions returns the options of a session of the request r, for
// the named client c (nil for none): the client's own, else those of the
// token's holder. Without a token the principal is left zero, for the
// caller to choose: the legacy session, or the connection.
func sessionOptions(r *http.Request, c Client) protocol.SessionOptions {
	var o protocol.SessionOptions
	lasting := true // the principal outlives the connection
	if c != nil {
		o = c.Session()
	} else {
		o.Principal, lasting = tokenPrincipal(r)
	}
	o.Transport = "http"
	o.TaskOwner = taskOwner(r, o.Principal, lasting)
	return o
}

// tools returns the tools a session of options o serves.
func (h *Handler) tools(o protocol.SessionOptions) protocol.ToolProvider {
	if o.Providers != nil && o.Providers.Tools != nil {
		return o.Providers.Tools
	}
	return h.srv.Tools
}

// admit takes the calls of a message from its named client's rate, and
// reports true; or answers 429, with Retry-After, and reports false when
// the client is over its rate. The body is a JSON-RPC error with the
// request's id (none for a batch), CodeRateLimited, and
// data.retryAfterMs.
func (h *Handler) admit(w http.ResponseWriter, c Client, env protocol.Envelope) bool {
	if c == nil || env.Calls == 0 {
		return true
	}
	wait, ok := c.Admit(env.Calls)
	if ok {
		return true
	}
	h.log.Debug().Str("method", env.Method).Dur("retry_after", wait).Msg("calls refused: over the client's rate")
	w.Header().Set("Retry-After", strconv.FormatInt((protocol.RetryAfterMs(wait)+999)/1000, 10))
	var id jsontext.Value
	if !env.Batch {
		id = env.ID
	}
	writeError(w, http.StatusTooManyRequests, id, protocol.RateLimited(wait))
	return false
}

// dropping is the Sink of a modern request's session: such a request has
// nothing that belongs to no request.
type dropping struct{}

func (dropping) Send(m protocol.Message) { m.Release() }

// mediaType returns a Content-Type's media type, lower case, without
// parameters.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

// accepts reports whether r's Accept header lists mt, or a wildcard
// that covers it.
func accepts(r *http.Request, mt string) bool {
	kind, _, _ := strings.Cut(mt, "/")
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			switch mediaType(strings.TrimSpace(part)) {
			case mt, kind + "/*", "*/*":
				return true
			}
		}
	}
	return false
}
