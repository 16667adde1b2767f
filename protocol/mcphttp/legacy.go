package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// postLegacy serves a POST of the legacy era, in its session: an
// initialize without a session id makes one. res counts the body.
func (h *Handler) postLegacy(w http.ResponseWriter, r *http.Request, body []byte, res *protocol.Reservation, env protocol.Envelope) {
	if v := env.ProtocolVersion; v != "" && !protocol.IsLegacyVersion(v) {
		writeError(w, http.StatusBadRequest, env.ID, &protocol.Error{Code: protocol.CodeHeaderMismatch,
			Message: "Header mismatch: the body's _meta names protocol " + v + ", the MCP-Protocol-Version header does not"})
		return
	}
	var s *session
	id := r.Header.Get("Mcp-Session-Id")
	minted := id == "" && env.Method == "initialize" && !env.Batch
	switch {
	case minted:
		var ok bool
		if s, ok = h.sessions.add(func() *session { return h.newSession(r) }); !ok {
			refuse(w, http.StatusServiceUnavailable, protocol.CodeInternalError, "too many sessions, all busy; try again later")
			return
		}
	case id == "":
		refuse(w, http.StatusBadRequest, protocol.CodeInvalidRequest, "Mcp-Session-Id is required: send initialize first")
		return
	default:
		if s = h.sessions.attach(id, tokenKey(r)); s == nil {
			refuse(w, http.StatusNotFound, protocol.CodeInvalidRequest, "unknown or ended session: initialize again")
			return
		}
	}
	defer h.sessions.detach(s)
	if v := s.ps.ProtocolVersion(); env.Batch && v != protocol.Version20250326 {
		// Refused whole, as the session would, but with a status: a batch
		// of notifications would otherwise be 202 and silently dropped.
		refuse(w, http.StatusBadRequest, protocol.CodeInvalidRequest, fmt.Sprintf("JSON-RPC batches are not part of protocol %s (only of 2025-03-26)", v))
		return
	}
	mb := newMailbox()
	defer mb.close()
	// A legacy client's disconnection is not a cancellation (it sends
	// notifications/cancelled for that): its calls run on, answered into
	// a closed mailbox.
	if err := s.ps.HandleReserved(context.WithoutCancel(r.Context()), body, mb, res); err != nil {
		refuse(w, http.StatusNotFound, protocol.CodeInvalidRequest, "session ended: initialize again")
		return
	}
	header := func(hd http.Header) { hd.Set("Mcp-Session-Id", s.id) }
	switch {
	case minted && s.ps.ProtocolVersion() == "":
		// initialize failed (it is answered before Handle returns): its
		// error is the answer, and there is no session.
		h.sessions.remove(s)
		defer s.close()
		header = nil
	case minted:
		h.log.Debug().Str("session", s.id[:8]).Msg("session started")
	}
	if !env.Request {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.respond(w, r, mb, false, header)
}

func (h *Handler) newSession(r *http.Request) *session {
	out := &stream{}
	// Its principal is the token's holder, else the session itself.
	who, ok := tokenPrincipal(r)
	return &session{id: newID(), token: tokenKey(r), ps: h.srv.NewSession(out, protocol.SessionOptions{Transport: "http", Principal: who, Owner: taskOwner(r, who, ok)}), out: out}
}

// get serves the GET stream of a legacy session: the messages of the
// session that belong to no request. It keeps the session in use.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if !versionSpoken(w, r) {
		return
	}
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
	defer h.sessions.detach(s)
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
	if !versionSpoken(w, r) {
		return
	}
	if protocol.IsModernVersion(r.Header.Get("MCP-Protocol-Version")) {
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, protocol.CodeInvalidRequest, "protocol "+protocol.ModernVersion+" has no sessions to end")
		return
	}
	s := h.legacySession(w, r)
	if s == nil {
		return
	}
	defer h.sessions.detach(s)
	if h.sessions.remove(s) {
		s.close()
		h.log.Debug().Str("session", s.id[:8]).Msg("session ended by the client")
	}
	w.WriteHeader(http.StatusNoContent)
}

// versionSpoken answers 400 and reports false when the request names a
// protocol version the server does not speak, as the transport says.
// (A POST's version is checked with its body.)
func versionSpoken(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get("MCP-Protocol-Version")
	if v == "" || protocol.IsLegacyVersion(v) || protocol.IsModernVersion(v) {
		return true
	}
	writeError(w, http.StatusBadRequest, nil, protocol.UnsupportedVersion(v))
	return false
}

// legacySession returns the session a GET or DELETE names, attached to
// it, or answers 400 or 404 and returns nil.
func (h *Handler) legacySession(w http.ResponseWriter, r *http.Request) *session {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		refuse(w, http.StatusBadRequest, protocol.CodeInvalidRequest, "Mcp-Session-Id is required")
		return nil
	}
	s := h.sessions.attach(id, tokenKey(r))
	if s == nil {
		refuse(w, http.StatusNotFound, protocol.CodeInvalidRequest, "unknown or ended session: initialize again")
	}
	return s
}
