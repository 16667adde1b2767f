package protocol

import (
	"slices"
	"strings"
	"time"
)

// Stats are a server's counters at one moment, read for the owner's
// console: they are copies, and reading them takes each session's lock
// briefly, one at a time.
type Stats struct {
	// Sessions are the sessions open, the oldest first: over stdio the
	// one, over HTTP each legacy session and each modern request being
	// served.
	Sessions []SessionStats
	// InFlight counts the requests running on goroutines of their own
	// (tool calls, reads, prompts, listen streams), over all sessions.
	InFlight int
	// HeldBytes are the bytes held on behalf of requests over all
	// sessions, and HeldLimit the server's bound on them.
	HeldBytes, HeldLimit int64
	// Asking counts the calls whose provider waits for the client's
	// answers (those MaxPendingAsks bounds).
	Asking int
	// Parked counts the 2026-07-28 calls kept between their requests.
	Parked int
}

// SessionStats describe one open session.
type SessionStats struct {
	// ID is the session's id in the audit log; Transport how its client
	// is connected.
	ID, Transport string
	// Principal is who its requests are for; Client what the client
	// calls itself (empty before initialize, and for a modern request
	// until it is read).
	Principal Principal
	Client    ClientInfo
	// ProtocolVersion is the version it negotiated, "" before
	// initialize and for a modern request.
	ProtocolVersion string
	// Started is when the session was made.
	Started time.Time
	// InFlight counts its requests running on goroutines of their own.
	InFlight int
}

// Stats returns the server's counters now.
func (s *Server) Stats() Stats {
	total := s.total()
	st := Stats{HeldBytes: total.inUse(), HeldLimit: total.limit}
	s.mu.Lock()
	st.Asking, st.Parked = s.asking, len(s.parked)
	s.mu.Unlock()
	for _, ss := range s.liveSessions() {
		ss.mu.Lock()
		n := len(ss.inflight)
		ss.mu.Unlock()
		st.InFlight += n
		var client ClientInfo
		if c := ss.client.Load(); c != nil {
			client = *c
		}
		st.Sessions = append(st.Sessions, SessionStats{ID: ss.id, Transport: ss.transport, Principal: ss.principal, Client: client,
			ProtocolVersion: ss.ProtocolVersion(), Started: ss.started, InFlight: n})
	}
	slices.SortFunc(st.Sessions, func(a, b SessionStats) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return st
}
