package mcphttp

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// session is a legacy-era session: the protocol session, the GET stream
// its messages that belong to no request go to, the token it was made
// with, and whether a client is using it.
type session struct {
	id     string
	token  string // tokenKey of the request that made it
	client Client // the named client it is for, or nil
	ps     *protocol.Session
	out    *stream

	// Guarded by the sessions' lock.
	attached int       // requests of the session being served (a POST awaiting its answer, the GET stream)
	seen     time.Time // when one last began or ended
}

// stream is a session's Sink for messages that belong to no request: they
// go to the GET stream when one is open. Without one, a notification is
// dropped, as a client without one cannot receive it; a request of the
// server's (a question for a task) waits for the next GET stream, since
// its asker waits for the answer. Those waiting are bounded by the
// questions a server has pending at once (MaxPendingAsks), each counted
// against the session's budget until it is written or the session ends.
type stream struct {
	mu      sync.Mutex
	cur     *mailbox           // the open GET stream's, or nil
	waiting []protocol.Message // requests sent while none was open
	closed  bool               // the session ended: nothing waits
}

func (s *stream) Send(m protocol.Message) {
	s.mu.Lock()
	cur := s.cur
	if m.Request() && !s.closed {
		// Under s.mu, so that a GET stream ending meanwhile finds it.
		if cur == nil || !cur.take(m) {
			s.waiting = append(s.waiting, m)
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if cur == nil {
		m.Release()
		return
	}
	cur.Send(m)
}

// open makes mb the stream's, closing the one it replaces, and sends it
// the requests that waited for one, and those the old one had not
// written.
func (s *stream) open(mb *mailbox) {
	s.mu.Lock()
	var kept []protocol.Message
	if old := s.cur; old != nil {
		kept = old.closeKeeping()
	}
	s.cur = mb
	waiting := append(kept, s.waiting...)
	s.waiting = nil
	for _, m := range waiting {
		mb.Send(m)
	}
	s.mu.Unlock()
}

// Redirect sends the requests waiting for a GET stream to out instead: a
// request of the client's (a 2025-11-25 tasks/result) that waits for its
// answer on a stream of its own, where the server's questions about the
// task now go.
func (s *stream) Redirect(out protocol.Sink) {
	s.mu.Lock()
	waiting := s.waiting
	s.waiting = nil
	s.mu.Unlock()
	for _, m := range waiting {
		out.Send(m)
	}
}

// end closes mb if it is still the stream's, keeping the requests it had
// not written for the next GET stream.
func (s *stream) end(mb *mailbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := mb.closeKeeping()
	if s.cur == mb {
		s.cur = nil
	}
	if s.closed {
		release(kept)
		return
	}
	s.waiting = append(kept, s.waiting...)
}

// close ends the stream's GET stream, if one is open, and drops the
// requests waiting for one: the session ended.
func (s *stream) close() {
	s.mu.Lock()
	cur := s.cur
	s.cur = nil
	waiting := s.waiting
	s.waiting, s.closed = nil, true
	s.mu.Unlock()
	if cur != nil {
		cur.close()
	}
	for _, m := range waiting {
		m.Release()
	}
}

// revoked reports whether the session's named client was revoked.
func (s *session) revoked() bool { return s.client != nil && isClosed(s.client.Revoked()) }

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// close ends the session: its GET stream closes, its calls are cancelled.
func (s *session) close() {
	s.out.close()
	s.ps.Close()
}

// sessions holds the legacy sessions by id, at most max of them, and
// knows which are in use. It is safe for concurrent use.
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
// attached (the caller detaches it), or reports false when every session
// is busy. Room is made by ending the session idle the longest; a busy
// one (in use, or with calls in flight) is never ended.
func (ss *sessions) add(newSession func() *session) (*session, bool) {
	ss.mu.Lock()
	var evict *session
	if len(ss.byID) >= ss.max {
		for _, s := range ss.byID {
			if s.attached == 0 && !s.ps.Busy() && (evict == nil || s.seen.Before(evict.seen)) {
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
	s.attached, s.seen = 1, time.Now()
	ss.byID[s.id] = s
	ss.mu.Unlock()
	if evict != nil {
		evict.close()
	}
	return s, true
}

// attach returns the session with id made with token key, attached to a
// request being served; the caller detaches it. It returns nil when there
// is no such session.
func (ss *sessions) attach(id, key string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	if s == nil || s.token != key {
		return nil
	}
	s.attached++
	s.seen = time.Now()
	return s
}

// detach ends a request's use of s.
func (ss *sessions) detach(s *session) {
	ss.mu.Lock()
	s.attached--
	s.seen = time.Now()
	ss.mu.Unlock()
}

// remove removes s, and reports whether it was there.
func (ss *sessions) remove(s *session) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID[s.id] != s {
		return false
	}
	delete(ss.byID, s.id)
	return true
}

// idle removes and returns the sessions no request has used since
// before. Their calls in flight do not keep them: whoever waited for
// those answers is gone.
func (ss *sessions) idle(before time.Time) []*session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*session
	for id, s := range ss.byID {
		if s.attached == 0 && s.seen.Before(before) {
			delete(ss.byID, id)
			out = append(out, s)
		}
	}
	return out
}

// revoked removes and returns the sessions whose named client was
// revoked.
func (ss *sessions) revoked() []*session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*session
	for id, s := range ss.byID {
		if s.revoked() {
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
