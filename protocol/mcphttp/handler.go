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
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
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
)

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
	// is busy, the request is refused with 503.
	MaxSessions int
	// SessionTimeout ends a legacy session unused for this long, and not
	// busy (default 30 min).
	SessionTimeout time.Duration
	// MaxBodySize bounds a request body in bytes (default 4 MiB); past
	// it the answer is 413.
	MaxBodySize int64
	// StallTimeout bounds each write to a client (default 10 s): a
	// client that stops reading its stream loses that stream.
	StallTimeout time.Duration
	// KeepAlive is the period of comments on an idle event stream
	// (default 25 s).
	KeepAlive time.Duration
	// MaxStreams bounds the modern subscriptions/listen streams open at
	// once (default 256); past it the answer is 503.
	MaxStreams int
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
	stop     chan struct{} // closed by Shutdown
	swept    chan struct{} // closed when the sweeper has returned

	mu       sync.Mutex
	draining bool
	active   sync.WaitGroup                 // requests being served; Add under mu
	modern   map[*protocol.Session]struct{} // the sessions of modern requests being served
	streams  int                            // modern listen streams open
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
		sessions: sessions{max: opts.MaxSessions, byID: map[string]*session{}}, modern: map[*protocol.Session]struct{}{}}
	if opts.Logger != nil {
		h.log = *opts.Logger
	}
	go h.sweep() // ends at Shutdown
	return h
}

// ServeHTTP serves the MCP endpoint and the health check.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case Path:
	case HealthPath:
		h.health(w, r)
		return
	default:
		http.NotFound(w, r)
		return
	}
	if d := h.opts.Guard.Check(r, true); d.Status != 0 {
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
		h.post(w, r)
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

// post serves a POST: one message, or a 2025-03-26 batch.
func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		refuse(w, http.StatusUnsupportedMediaType, protocol.CodeInvalidRequest, "Content-Type must be application/json")
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		refuse(w, http.StatusNotAcceptable, protocol.CodeInvalidRequest, "Accept must list application/json and text/event-stream")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodySize))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		refuse(w, http.StatusRequestEntityTooLarge, protocol.CodeInvalidRequest, "request body larger than the server's limit")
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
		h.postModern(w, r, body, env)
		return
	}
	h.postLegacy(w, r, body, env)
}

// postLegacy serves a POST of the legacy era, in its session.
func (h *Handler) postLegacy(w http.ResponseWriter, r *http.Request, body []byte, env protocol.Envelope) {
	if v := env.ProtocolVersion; v != "" && !protocol.IsLegacyVersion(v) {
		writeError(w, http.StatusBadRequest, env.ID, &protocol.Error{Code: protocol.CodeHeaderMismatch,
			Message: "Header mismatch: the body's _meta names protocol " + v + ", the MCP-Protocol-Version header does not"})
		return
	}
	var s *session
	id := r.Header.Get("Mcp-Session-Id")
	switch {
	case id == "" && env.Method == "initialize" && !env.Batch:
		var ok bool
		if s, ok = h.sessions.add(func() *session { return h.newSession(r) }); !ok {
			refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "too many sessions, all busy; try again later")
			return
		}
		h.log.Debug().Str("session", s.id[:8]).Msg("session started")
	case id == "":
		refuse(w, http.StatusBadRequest, protocol.CodeInvalidRequest, "Mcp-Session-Id is required: send initialize first")
		return
	default:
		if s = h.sessions.get(id); s == nil || s.token != tokenKey(r) {
			refuse(w, http.StatusNotFound, protocol.CodeInvalidRequest, "unknown or ended session: initialize again")
			return
		}
	}
	mb := newMailbox()
	defer mb.close()
	// A legacy client's disconnection is not a cancellation (it sends
	// notifications/cancelled for that): its calls run on, answered into
	// a closed mailbox.
	if err := s.ps.Handle(context.WithoutCancel(r.Context()), body, mb); err != nil {
		refuse(w, http.StatusNotFound, protocol.CodeInvalidRequest, "session ended: initialize again")
		return
	}
	if !env.Request {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.respond(w, r, mb, false, func(hd http.Header) { hd.Set("Mcp-Session-Id", s.id) })
}

func (h *Handler) newSession(r *http.Request) *session {
	out := &stream{}
	return &session{id: newID(), token: tokenKey(r), ps: h.srv.NewSession("http", out), out: out}
}

// postModern serves a POST of the modern era: a request on its own, with
// the headers that mirror its body checked first.
func (h *Handler) postModern(w http.ResponseWriter, r *http.Request, body []byte, env protocol.Envelope) {
	if err := checkHeaders(r, env); err != nil {
		writeError(w, http.StatusBadRequest, env.ID, err)
		return
	}
	listen := env.Method == "subscriptions/listen"
	if listen && !h.openStream() {
		refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "too many open subscriptions/listen streams; try again later")
		return
	}
	ps := h.srv.NewSession("http", dropping{})
	h.track(ps, true)
	defer func() {
		ps.Close()
		h.track(ps, false)
		if listen {
			h.closeStream()
		}
	}()
	mb := newMailbox()
	defer mb.close()
	// Closing the response stream cancels the request, as 2026-07-28 says.
	if err := ps.Handle(r.Context(), body, mb); err != nil {
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
// log messages, requests of the server's) come first. header, when set,
// adds headers before the status is written.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, mb *mailbox, modern bool, header func(http.Header)) {
	select {
	case <-mb.wake:
	case <-r.Context().Done():
		return // gone: the mailbox closes, and drops what comes
	}
	msgs := mb.drain()
	if len(msgs) == 1 && msgs[0].Final() {
		m := &msgs[0]
		defer m.Release()
		if header != nil {
			header(w.Header())
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(statusOf(m, modern))
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.StallTimeout))
		_, err := m.WriteTo(w)
		if err == nil {
			// On the wire before the handler returns: a shutdown may close
			// the connection as soon as every handler has.
			err = rc.Flush()
		}
		if err != nil {
			h.log.Debug().Err(err).Msg("response not written")
		}
		return
	}
	s := startSSE(w, h.opts.StallTimeout, header)
	for i := range msgs {
		if err := s.event(&msgs[i]); err != nil {
			release(msgs[i+1:])
			return
		}
		if msgs[i].Final() {
			release(msgs[i+1:])
			_ = s.flush()
			return
		}
	}
	if err := s.flush(); err != nil {
		return
	}
	err := pump(r.Context(), nil, mb, s, h.opts.KeepAlive, (*protocol.Message).Final)
	if err != nil && !errors.Is(err, errGone) {
		h.log.Debug().Err(err).Msg("event stream ended")
	}
}

// get serves the GET stream of a legacy session: the messages of the
// session that belong to no request.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if protocol.IsModernVersion(r.Header.Get("MCP-Protocol-Version")) {
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, protocol.CodeInvalidRequest, "protocol "+protocol.ModernVersion+" has no GET stream; use subscriptions/listen")
		return
	}
	if !accepts(r, "text/event-stream") {
		refuse(w, http.StatusNotAcceptable, protocol.CodeInvalidRequest, "Accept must list text/event-stream")
		return
	}
	s := h.legacySession(w, r)
	if s == nil {
		return
	}
	mb := newMailbox()
	s.out.open(mb)
	defer s.out.end(mb)
	sse := startSSE(w, h.opts.StallTimeout, nil)
	if err := sse.flush(); err != nil {
		return
	}
	never := func(*protocol.Message) bool { return false }
	if err := pump(r.Context(), mb.done, mb, sse, h.opts.KeepAlive, never); err != nil && !errors.Is(err, errGone) {
		h.log.Debug().Err(err).Msg("GET stream ended")
	}
}

// delete ends a legacy session and cancels its calls.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	if protocol.IsModernVersion(r.Header.Get("MCP-Protocol-Version")) {
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, protocol.CodeInvalidRequest, "protocol "+protocol.ModernVersion+" has no sessions to end")
		return
	}
	s := h.legacySession(w, r)
	if s == nil {
		return
	}
	if h.sessions.remove(s.id) == s {
		s.close()
		h.log.Debug().Str("session", s.id[:8]).Msg("session ended by the client")
	}
	w.WriteHeader(http.StatusNoContent)
}

// legacySession returns the session a GET or DELETE names, or answers
// 400 or 404 and returns nil.
func (h *Handler) legacySession(w http.ResponseWriter, r *http.Request) *session {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		refuse(w, http.StatusBadRequest, protocol.CodeInvalidRequest, "Mcp-Session-Id is required")
		return nil
	}
	s := h.sessions.get(id)
	if s == nil || s.token != tokenKey(r) {
		refuse(w, http.StatusNotFound, protocol.CodeInvalidRequest, "unknown or ended session: initialize again")
		return nil
	}
	return s
}

// health answers the health check: no token needed, nothing secret told.
func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	if d := h.opts.Guard.Check(r, false); d.Status != 0 {
		refuse(w, d.Status, protocol.CodeInvalidRequest, d.Reason)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var body any = map[string]string{"status": "ok"}
	if h.opts.Health != nil {
		body = h.opts.Health()
	}
	b, err := json.Marshal(body)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(b, '\n'))
}

// Shutdown stops taking requests (they get 503), ends the event streams,
// lets the requests in flight be answered until ctx ends, then ends every
// session, cancelling what calls are left, and waits for their answers.
// It returns ctx's error when calls had to be cancelled.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if h.draining {
		h.mu.Unlock()
		return nil
	}
	h.draining = true
	modern := make([]*protocol.Session, 0, len(h.modern))
	for ps := range h.modern {
		modern = append(modern, ps)
	}
	h.mu.Unlock()
	close(h.stop)
	<-h.swept
	legacy := h.sessions.all()
	for _, s := range legacy {
		s.out.mu.Lock()
		cur := s.out.cur
		s.out.mu.Unlock()
		if cur != nil {
			s.out.end(cur)
		}
		s.ps.Drain()
	}
	for _, ps := range modern {
		ps.Drain() // listen streams end with their final result
	}
	done := make(chan struct{})
	go func() { h.active.Wait(); close(done) }() // ends when every request has been served
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	for _, s := range legacy {
		s.close()
	}
	for _, ps := range modern {
		ps.Close()
	}
	<-done
	return err
}

// sweep ends the sessions idle past the timeout, until Shutdown.
func (h *Handler) sweep() {
	defer close(h.swept)
	every := min(h.opts.SessionTimeout/4, time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			for _, s := range h.sessions.idle(now.Add(-h.opts.SessionTimeout)) {
				h.log.Debug().Str("session", s.id[:8]).Msg("session ended: idle past the timeout")
				s.close()
			}
		}
	}
}

func (h *Handler) track(ps *protocol.Session, on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if on {
		h.modern[ps] = struct{}{}
	} else {
		delete(h.modern, ps)
	}
}

func (h *Handler) openStream() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams >= h.opts.MaxStreams {
		return false
	}
	h.streams++
	return true
}

func (h *Handler) closeStream() {
	h.mu.Lock()
	h.streams--
	h.mu.Unlock()
}

// Sessions returns how many legacy sessions are open.
func (h *Handler) Sessions() int { return h.sessions.count() }

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
