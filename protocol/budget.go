package protocol

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// budget bounds the bytes held on behalf of requests: a request's
// arguments, the backend's reply while it is read, responses and
// notifications until they are written. A session has one, drawing also
// on its server's, which bounds the process: every byte counts at both
// levels. Bytes are counted before they are held (a reply as it is read)
// or, for the small messages the server makes itself, as they are made,
// and released exactly once, when written or dropped.
//
// Past the limit the reader waits before it reads another request, a call
// reading a reply waits for room, and a notification is dropped. One
// exception keeps that from ever blocking everyone: the oldest running
// call that reads a reply may take bytes past the limit. Otherwise calls
// that each hold part of a large reply could wait for one another for
// good; with it, the oldest finishes, its response is written, and the
// next goes on. A call counts from its first Grow until its response is
// written, so a client that does not read holds the budget at its limit,
// plus at most one reply; a call that waits (for the backend, for the
// user) and a listen stream, which grow nothing, hold up no one.
//
// All budgets of a server share their root's lock; they are safe for
// concurrent use.
type budget struct {
	limit  int64
	parent *budget
	root   *budget

	// Guarded by root.mu.
	used    int64
	running map[*hold]struct{} // holds of calls running or waiting to be written

	// Root only.
	mu      sync.Mutex
	wake    chan struct{} // closed when bytes are released; nil while nobody waits
	peak    int64         // the most counted since used was last zero
	idle    *time.Timer   // returns a burst's memory once nothing was held for a while
	reading *budget       // the level of messages being read (Reservation); made at first use
}

// burst is the peak past which the end of a burst returns the memory it
// used to the operating system, once nothing was held for idleAfter: the
// garbage collector would otherwise keep it until its next cycle, which an
// idle process may not have for minutes. Waiting for the quiet keeps a run
// of large results from paying, result after result, for pages given back
// and faulted in again.
const (
	burst     = 16 << 20
	idleAfter = time.Second
)

func newBudget(limit int64, parent *budget) *budget {
	b := &budget{limit: limit, parent: parent, running: map[*hold]struct{}{}}
	b.root = b
	if parent != nil {
		b.root = parent.root
	}
	return b
}

// holdSeq orders holds by age across a process: the smaller, the older.
var holdSeq atomic.Uint64

// hold is the bytes held for one request, counted against its session's
// budget and its server's. A provider makes its call's hold grow as it
// reads what the response will carry (Call.Grow). Its methods are safe
// for concurrent use; a nil *hold counts nothing.
type hold struct {
	b       *budget
	seq     uint64
	held    int64 // guarded by b.root.mu
	running bool  // has grown: in the running sets; guarded by b.root.mu
	done    bool  // finished: it counts nothing more; guarded by b.root.mu
}

func (b *budget) newHold() *hold {
	return &hold{b: b, seq: holdSeq.Add(1)}
}

// Grow counts n more bytes, waiting while the budget has no room for them
// unless this is the oldest call that grew. It fails only when ctx ends
// first.
func (h *hold) Grow(ctx context.Context, n int) error {
	if h == nil || n <= 0 {
		return nil
	}
	root := h.b.root
	root.mu.Lock()
	if !h.running {
		h.running = true
		for b := h.b; b != nil; b = b.parent {
			b.running[h] = struct{}{}
		}
	}
	for !h.mayTake(int64(n)) {
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

// mayTake reports whether h may take n more bytes now: at every level
// they fit, or h is that level's oldest running call.
func (h *hold) mayTake(n int64) bool {
	for b := h.b; b != nil; b = b.parent {
		if b.used+n > b.limit && !(h.running && b.oldest() == h) {
			return false
		}
	}
	return true
}

// oldest returns the oldest hold in b's running set.
func (b *budget) oldest() *hold {
	var old *hold
	for h := range b.running {
		if old == nil || h.seq < old.seq {
			old = h
		}
	}
	return old
}

// charge counts n bytes already held, whatever room there is: for what
// the server makes itself, bounded by the request that made it.
func (h *hold) charge(n int) {
	if h == nil || n <= 0 {
		return
	}
	h.b.root.mu.Lock()
	h.add(int64(n))
	h.b.root.mu.Unlock()
}

func (h *hold) add(n int64) {
	if h.done {
		return // late bytes of a request answered already: nobody would release them
	}
	h.held += n
	h.b.addLocked(n)
}

// addLocked counts n more bytes at every level; root.mu is held.
func (b *budget) addLocked(n int64) {
	for l := b; l != nil; l = l.parent {
		l.used += n
	}
	if root := b.root; root.used > root.peak {
		root.peak = root.used
	}
}

// releaseLocked counts n bytes fewer at every level and wakes whoever
// waits for room; root.mu is held. It reports whether a burst just ended.
func (b *budget) releaseLocked(n int64) (burstOver bool) {
	for l := b; l != nil; l = l.parent {
		l.used -= n
	}
	root := b.root
	root.wakeLocked()
	if root.used == 0 {
		burstOver, root.peak = root.peak >= burst, 0
	}
	return burstOver
}

// afterBurst arranges, when a burst is over, for its memory to go back to
// the system once nothing is held for idleAfter.
func (b *budget) afterBurst(over bool) {
	if !over {
		return
	}
	root := b.root
	root.mu.Lock()
	defer root.mu.Unlock()
	if root.idle == nil {
		// The timer's function runs on a goroutine of its own, and ends.
		root.idle = time.AfterFunc(idleAfter, root.releaseIfIdle)
	} else {
		root.idle.Reset(idleAfter)
	}
}

func (b *budget) releaseIfIdle() {
	b.mu.Lock()
	idle := b.used == 0
	b.mu.Unlock()
	if idle {
		debug.FreeOSMemory()
	}
}

// shrink gives back n of the bytes h counts, no longer held.
func (h *hold) shrink(n int) {
	if h == nil || n <= 0 {
		return
	}
	root := h.b.root
	root.mu.Lock()
	n = int(min(int64(n), h.held))
	h.held -= int64(n)
	over := h.b.releaseLocked(int64(n))
	root.mu.Unlock()
	h.b.afterBurst(over)
}

// finish releases everything h holds: the request is answered, and its
// response written or dropped. Finishing twice is harmless.
func (h *hold) finish() {
	if h == nil {
		return
	}
	root := h.b.root
	root.mu.Lock()
	for b := h.b; b != nil; b = b.parent {
		delete(b.running, h)
	}
	over := h.b.releaseLocked(h.held)
	h.held, h.running, h.done = 0, false, true
	root.mu.Unlock()
	h.b.afterBurst(over)
}

// wakeLocked wakes everyone waiting for room; root.mu is held.
func (b *budget) wakeLocked() {
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
}

// tryTake counts n bytes not tied to a request (a notification) if they
// fit at every level, and reports whether they did.
func (b *budget) tryTake(n int) bool {
	b.root.mu.Lock()
	defer b.root.mu.Unlock()
	for l := b; l != nil; l = l.parent {
		if l.used+int64(n) > l.limit {
			return false
		}
	}
	b.addLocked(int64(n))
	return true
}

// take counts n bytes not tied to a request, whatever room there is.
func (b *budget) take(n int) {
	b.root.mu.Lock()
	b.addLocked(int64(n))
	b.root.mu.Unlock()
}

// give releases n bytes that take or tryTake counted.
func (b *budget) give(n int) {
	b.root.mu.Lock()
	over := b.releaseLocked(int64(n))
	b.root.mu.Unlock()
	b.afterBurst(over)
}

// waitRoom waits until b and its parents are below their limits, for the
// reader before it takes another request, not counting in the root's
// the bytes of own, the request's own message as read so far (nil for
// none). It reports false when ctx ends or stop is closed first.
func (b *budget) waitRoom(ctx context.Context, stop <-chan struct{}, own *Reservation) bool {
	root := b.root
	root.mu.Lock()
	for b.full(own.held()) {
		if root.wake == nil {
			root.wake = make(chan struct{})
		}
		wake := root.wake
		root.mu.Unlock()
		select {
		case <-wake:
		case <-stop:
			return false
		case <-ctx.Done():
			return false
		}
		root.mu.Lock()
	}
	root.mu.Unlock()
	return true
}

// full reports whether b or a parent is at its limit, own bytes fewer
// counted in the root's; root.mu is held.
func (b *budget) full(own int64) bool {
	for l := b; l != nil; l = l.parent {
		used := l.used
		if l == l.root {
			used -= own
		}
		if used >= l.limit {
			return true
		}
	}
	return false
}

// inUse returns the bytes b counts now.
func (b *budget) inUse() int64 {
	b.root.mu.Lock()
	defer b.root.mu.Unlock()
	return b.used
}
