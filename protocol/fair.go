package protocol

import (
	"context"
	"sync"
)

// FairShare hands out a fixed number of slots, such as the calls running
// at once or the backend's connections, fairly among principals. While
// others wait, a principal holds at most ⌈slots ÷ principals waiting or
// holding⌉ (at least one), and each slot that comes free goes to the next
// principal waiting, in turn; a principal alone may hold every slot, and
// no slot stays free while anyone waits. So one principal's many or slow
// calls delay another's by at most the time the first slot takes to come
// free.
//
// A principal may also have a limit of its own (Limit), which holds
// whatever room there is. Its methods are safe for concurrent use.
type FairShare struct {
	size  int
	limit func(Principal) int

	mu    sync.Mutex
	used  int
	byWho map[Principal]*share // principals holding or waiting
	turn  []*share             // principals waiting, in turn order
	next  int                  // the index in turn of the next to serve
	spare *share               // the last share forgotten, for the next made: most calls find none
}

// share is one principal's part of a FairShare.
type share struct {
	who     Principal
	held    int
	waiting []chan struct{} // closed when granted, oldest first
	limit   int             // its own limit; 0 for none
}

// NewFairShare returns a FairShare of size slots (at least one). limit,
// when not nil, returns the most slots a principal may hold (0: no limit
// of its own); it is asked at each Acquire, so that a limit that changes
// (a client's policy edited) holds from the principal's next call on, and
// must not block.
func NewFairShare(size int, limit func(Principal) int) *FairShare {
	return &FairShare{size: max(size, 1), limit: limit, byWho: map[Principal]*share{}}
}

// Acquire waits for a slot for who. It returns nil once who holds one,
// which it gives back with Release, or ctx's error when ctx ends first.
func (f *FairShare) Acquire(ctx context.Context, who Principal) error {
	f.mu.Lock()
	s := f.shareOf(who)
	if len(f.turn) == 0 && f.used < f.size && s.under(f.size) {
		s.held++
		f.used++
		f.mu.Unlock()
		return nil
	}
	granted := make(chan struct{})
	s.waiting = append(s.waiting, granted)
	if len(s.waiting) == 1 {
		f.turn = append(f.turn, s)
	}
	f.grant()
	f.mu.Unlock()

	select {
	case <-granted:
		return nil
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-granted: // granted meanwhile: given back
		f.release(s)
	default:
		f.dequeue(s, granted)
	}
	return ctx.Err()
}

// Release gives back a slot who holds.
func (f *FairShare) Release(who Principal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.byWho[who]; s != nil && s.held > 0 {
		f.release(s)
	}
}

// Held returns the slots held in all, and by who.
func (f *FairShare) Held(who Principal) (all, its int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.byWho[who]; s != nil {
		its = s.held
	}
	return f.used, its
}

// shareOf returns who's share, made when who neither holds nor waits,
// with its limit as it is now.
func (f *FairShare) shareOf(who Principal) *share {
	s := f.byWho[who]
	if s == nil {
		if s = f.spare; s != nil {
			f.spare = nil
			*s = share{who: who, waiting: s.waiting[:0]}
		} else {
			s = &share{who: who}
		}
		f.byWho[who] = s
	}
	if f.limit != nil {
		s.limit = f.limit(who)
	}
	return s
}

// under reports whether s may take one more of size slots by its own
// limit.
func (s *share) under(size int) bool { return s.limit <= 0 || s.held < min(s.limit, size) }

// release gives back one of s's slots and hands out what is free.
func (f *FairShare) release(s *share) {
	s.held--
	f.used--
	f.forget(s)
	f.grant()
}

// dequeue withdraws a waiter of s that was not granted.
func (f *FairShare) dequeue(s *share, granted chan struct{}) {
	for i, w := range s.waiting {
		if w == granted {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	if len(s.waiting) == 0 {
		f.leaveTurn(s)
	}
	f.forget(s)
	// A waiter withdrawn may have been the only one under its fair
	// share: the others over it may now take what is free.
	f.grant()
}

// forget drops s once it neither holds nor waits.
func (f *FairShare) forget(s *share) {
	if s.held == 0 && len(s.waiting) == 0 {
		delete(f.byWho, s.who)
		f.spare = s
	}
}

// leaveTurn takes s, which waits no more, out of the turn order.
func (f *FairShare) leaveTurn(s *share) {
	for i, t := range f.turn {
		if t == s {
			f.turn = append(f.turn[:i], f.turn[i+1:]...)
			if i < f.next {
				f.next--
			}
			break
		}
	}
}

// grant hands the free slots to the principals waiting, in turn: first to
// those under their fair share, then, when only those over it wait, to
// them too, so that no slot stays free while anyone waits.
func (f *FairShare) grant() {
	for f.used < f.size && len(f.turn) > 0 {
		fair := (f.size + len(f.byWho) - 1) / len(f.byWho) // ⌈size ÷ principals holding or waiting⌉
		i := f.pick(func(s *share) bool { return s.held < fair && s.under(f.size) })
		if i < 0 {
			i = f.pick(func(s *share) bool { return s.under(f.size) })
		}
		if i < 0 {
			return // every waiter is at its own limit
		}
		s := f.turn[i]
		close(s.waiting[0])
		s.waiting = s.waiting[1:]
		s.held++
		f.used++
		f.next = i + 1
		if len(s.waiting) == 0 {
			f.leaveTurn(s)
		}
	}
}

// pick returns the index in turn of the next principal from next on that
// ok accepts, or -1.
func (f *FairShare) pick(ok func(*share) bool) int {
	n := len(f.turn)
	for k := range n {
		i := (f.next + k) % n
		if ok(f.turn[i]) {
			return i
		}
	}
	return -1
}
