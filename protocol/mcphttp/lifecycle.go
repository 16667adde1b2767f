package mcphttp

import (
	"context"
	"net/http"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/protocol"
)

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
		s.out.close()
		s.ps.Drain()
	}
	for _, ps := range modern {
		ps.Drain() // listen streams end with their final result
	}
	// Calls parked for answers no client will bring now end.
	h.srv.CancelParked()
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
	every := max(min(h.opts.SessionTimeout/4, time.Minute), time.Millisecond)
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

// track counts ps among the sessions of modern requests being served,
// which Shutdown ends, or reports false when Shutdown has begun: so no
// request slips between its list and its start.
func (h *Handler) track(ps *protocol.Session, c Client) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return false
	}
	h.modern[ps] = c
	return true
}

func (h *Handler) untrack(ps *protocol.Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.modern, ps)
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

// EndRevoked ends the sessions of the named clients that were revoked
// (their Revoked channel is closed): their legacy sessions end, so that
// the next request naming one gets 404, and its GET stream closes; and
// their modern requests in flight end, their calls cancelled. It returns
// once those sessions' calls have returned, and how many sessions it
// ended. The owner of the clients calls it after revoking some.
func (h *Handler) EndRevoked() int {
	legacy := h.sessions.revoked()
	h.mu.Lock()
	var modern []*protocol.Session
	for ps, c := range h.modern {
		if c != nil && isClosed(c.Revoked()) {
			modern = append(modern, ps)
		}
	}
	h.mu.Unlock()
	for _, s := range legacy {
		h.log.Debug().Str("session", s.id[:8]).Msg("session ended: its client was revoked")
		s.close()
	}
	for _, ps := range modern {
		ps.Close() // closed again, harmlessly, as its request ends
	}
	return len(legacy) + len(modern)
}

// Sessions returns how many legacy sessions are open.
func (h *Handler) Sessions() int { return h.sessions.count() }
