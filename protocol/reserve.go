package protocol

import "context"

// Reservation counts the bytes of one message against its server's byte
// budget while a transport reads it, before the session that will handle
// it is known (Streamable HTTP makes a modern request's session once its
// body is read). The transport grows it before it holds each piece it
// reads, then hands it to Session.HandleReserved with the message, whose
// request the bytes then belong to, or releases it (a refused body, a
// client gone). So a message is counted from its first byte held until
// its response is written, and never twice.
//
// Messages being read draw on a level of the server's budget of their
// own, half of it: clients that send large bodies slowly, or never finish
// them, cannot take the room requests already read need to be answered.
// A message's first 64 KiB do not wait on that level: a small request
// is never held up behind large ones being read, which the transport
// bounds in number. Every piece waits for room in the server's budget,
// but those of the oldest message being read, which never waits: so
// messages that each need more than their share are all read, one after
// another, and the budget goes past its limit by one message at most.
//
// A Reservation belongs to the goroutine that reads its message: its
// methods are not safe for concurrent use.
type Reservation struct {
	h *hold // on the server's level of messages being read; nil once handed over or released
}

// firstPiece is how much of a message being read may be counted without
// waiting on the level of messages being read.
const firstPiece = 64 << 10

// Reserve returns an empty reservation against s's budget. The caller
// hands it to HandleReserved or releases it.
func (s *Server) Reserve() *Reservation {
	return &Reservation{h: s.total().readers().newHold()}
}

// readers returns the level of root, a server's budget, that counts the
// messages being read, made at first use.
func (b *budget) readers() *budget {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reading == nil {
		b.reading = newBudget(b.limit/2, b)
	}
	return b.reading
}

// Grow counts n more bytes of the message, which the caller is about to
// hold, waiting while the budget has no room for them (see Reservation).
// It fails only when ctx ends first; the bytes counted so far stay
// counted until Release.
func (r *Reservation) Grow(ctx context.Context, n int) error {
	h := r.h
	if h == nil || n <= 0 {
		return nil
	}
	root := h.b.root
	root.mu.Lock()
	if !h.running {
		// Oldest among the messages being read only: a client that never
		// finishes its body must not count as the oldest call, whose
		// right to go past the limit keeps calls from waiting for one
		// another. Its age counts from its first byte, not from Reserve:
		// one reserved earlier but read later must not become the oldest
		// after another has gone past the level as the oldest, or two
		// would be past it at once.
		h.running, h.seq = true, holdSeq.Add(1)
		h.b.running[h] = struct{}{}
	}
	for !r.mayTake(int64(n)) {
		if root.wake == nil {
			root.wake = make(chan struct{})
		}
		wake := root.wake
		root.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
		root.mu.Lock()
	}
	h.add(int64(n))
	root.mu.Unlock()
	return nil
}

// mayTake reports whether r may count n more bytes now; root.mu is held.
func (r *Reservation) mayTake(n int64) bool {
	h := r.h
	level, root := h.b, h.b.root
	if level.oldest() == h {
		return true
	}
	if h.held+n > firstPiece && level.used+n > level.limit {
		return false
	}
	return root.used+n <= root.limit
}

// Release releases the bytes counted: the message will not be handled.
// After HandleReserved, or a second time, it does nothing.
func (r *Reservation) Release() {
	if r != nil && r.h != nil {
		r.h.finish()
		r.h = nil
	}
}

// held returns the bytes r counts; root.mu is held.
func (r *Reservation) held() int64 {
	if r == nil || r.h == nil {
		return 0
	}
	return r.h.held
}

// handOver returns a new hold of b, a session's budget, that holds r's
// bytes, and empties r: the server's budget counts them throughout, the
// level of messages being read no longer does, and b's levels below the
// server's now do.
func (r *Reservation) handOver(b *budget) *hold {
	h := b.newHold()
	if r == nil || r.h == nil {
		return h
	}
	old, root := r.h, b.root
	root.mu.Lock()
	delete(old.b.running, old)
	for l := old.b; l != root; l = l.parent {
		l.used -= old.held
	}
	for l := b; l != root; l = l.parent {
		l.used += old.held
	}
	h.held, old.held = old.held, 0
	root.wakeLocked() // room on the level of messages being read
	root.mu.Unlock()
	r.h = nil
	return h
}
