package mcphttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// conns counts the connections of the servers a Handler was given
// (CountConnections), up to a limit. It counts them from the server's
// hooks, not by wrapping its listener: a listener sits below TLS, where
// it could close a connection but not answer it 503. It is safe for
// concurrent use.
type conns struct {
	max     int
	refused atomic.Int64 // connections opened past max

	mu    sync.Mutex
	open  map[net.Conn]struct{} // admitted and not closed
	fresh map[net.Conn]struct{} // opened, no request read yet (http.StateNew)
}

// track follows c into state s: a connection is fresh until its first
// request.
func (cs *conns) track(c net.Conn, s http.ConnState) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if s == http.StateNew {
		if cs.fresh == nil {
			cs.fresh = map[net.Conn]struct{}{}
		}
		cs.fresh[c] = struct{}{}
	} else {
		delete(cs.fresh, c)
	}
}

// closeFresh closes the connections that have sent no request: on
// shutdown they carry nothing to answer, and http.Server.Shutdown would
// wait 5 s for each before it counted it idle.
func (cs *conns) closeFresh() {
	cs.mu.Lock()
	fresh := cs.fresh
	cs.fresh = nil
	cs.mu.Unlock()
	for c := range fresh {
		c.Close()
	}
}

// admit counts c, or reports false when max connections are open.
func (cs *conns) admit(c net.Conn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.open) >= cs.max {
		return false
	}
	cs.open[c] = struct{}{}
	return true
}

// forget stops counting c, closed; one never admitted was not counted.
func (cs *conns) forget(c net.Conn) {
	cs.mu.Lock()
	delete(cs.open, c)
	cs.mu.Unlock()
}

// overLimit marks the context of a connection opened past MaxConnections.
type overLimit struct{}

// CountConnections makes h count hs's connections against
// MaxConnections: it sets hs.ConnContext and hs.ConnState, calling those
// already set. A connection opened past the limit is refused: each
// request on it gets 503, and it is closed after the first. Connections
// are counted, not requests; one over HTTP/2 may carry many. When hs
// shuts down, the connections that have sent no request yet are closed
// (see conns.closeFresh). Call it before hs serves.
func (h *Handler) CountConnections(hs *http.Server) {
	prevContext, prevState := hs.ConnContext, hs.ConnState
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevContext != nil {
			ctx = prevContext(ctx, c)
		}
		if !h.conns.admit(c) {
			if n := h.conns.refused.Add(1); n&(n-1) == 0 { // a line at 1, 2, 4, 8, … refused
				h.log.Warn().Int("max_connections", h.conns.max).Int64("refused", n).Msg("too many connections: new ones refused")
			}
			return context.WithValue(ctx, overLimit{}, true)
		}
		return ctx
	}
	hs.RegisterOnShutdown(h.conns.closeFresh) // run once Shutdown has closed the listeners
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		h.conns.track(c, s)
		if s == http.StateClosed || s == http.StateHijacked {
			h.conns.forget(c)
		}
		if prevState != nil {
			prevState(c, s)
		}
	}
}
