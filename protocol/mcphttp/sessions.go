package mcphttp

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// session is a legacy-era session: the protocol session, the GET stream
// its messages that belong to no request go to, and the token it was
// made with.
type session struct {
	id    string
	token string // tokenKey of the request that made it
	ps    *protocol.Session
	out   *stream
}

// stream is a session's Sink for messages that belong to no request: they
// go to the GET stream when one is open, and are dropped otherwise, as a
// client without one cannot receive them.
type stream struct {
	mu  sync.Mutex
	cur *mailbox // the open GET stream's, or nil
}

func (s *stream) Send(m protocol.Message) {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		m.Release()
		return
	}
	cur.Send(m)
}

// open makes mb the stream's, closing the one it replaces.
func (s *stream) open(mb *mailbox) {
	s.mu.Lock()
	old := s.cur
	s.cur = mb
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
}

// end closes mb if it is still the stream's.
func (s *stream) end(mb *mailbox) {
	s.mu.Lock()
	if s.cur == mb {
		s.cur = nil
	}
	s.mu.Unlock()
	mb.close()
}

// sessions holds the legacy sessions by id, at most max of them. It is
// safe for concurrent use.
type sessions struct {
	max int

	mu   sync.Mutex
	byID map[string]*session
}

// newID returns an unguessable session id: 128 random bits in hex.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

// add makes room for one more session and adds the one newSession makes,
// or reports false when every session is busy. Room is made by ending the
// session idle the longest; a busy one is never ended.
func (ss *sessions) add(newSession func() *session) (*session, bool) {
	ss.mu.Lock()
	var evict *session
	if len(ss.byID) >= ss.max {
		for _, s := range ss.byID {
			if !s.ps.Busy() && (evict == nil || s.ps.LastUsed().Before(evict.ps.LastUsed())) {
				evict = s
			}
		}
		if evict == nil {
			ss.mu.Unlock()
			return nil, false
		}
		delete(ss.byID, evict.id)
	}
	s := newSession()
	ss.byID[s.id] = s
	ss.mu.Unlock()
	if evict != nil {
		evict.close()
	}
	return s, true
}

func (ss *sessions) get(id string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.byID[id]
}

// remove removes and returns the session with id, or nil.
func (ss *sessions) remove(id string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	delete(ss.byID, id)
	return s
}

// idle removes and returns the sessions not busy and unused since before.
func (ss *sessions) idle(before time.Time) []*session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*session
	for id, s := range ss.byID {
		if !s.ps.Busy() && s.ps.LastUsed().Before(before) {
			delete(ss.byID, id)
			out = append(out, s)
		}
	}
	return out
}

// all removes and returns every session.
func (ss *sessions) all() []*session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]*session, 0, len(ss.byID))
	for id, s := range ss.byID {
		delete(ss.byID, id)
		out = append(out, s)
	}
	return out
}

func (ss *sessions) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.byID)
}

// close ends the session: its GET stream closes, its calls are cancelled.
func (s *session) close() {
	s.out.mu.Lock()
	cur := s.out.cur
	s.out.mu.Unlock()
	if cur != nil {
		s.out.end(cur)
	}
	s.ps.Close()
}
