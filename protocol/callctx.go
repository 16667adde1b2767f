package protocol

import (
	"context"
	"sync"
	"time"
)

// callCtx is a call's context, held in the call itself: cancelled by
// notifications/cancelled, when the session ends, or when the call
// returns. context.WithCancel and WithValue took three allocations a
// call, and the socket client's context.AfterFunc, which interrupts a
// backend call on cancellation, two more and a map: about 500 bytes and
// 1.5 µs a call, a twentieth of the bridge's own work (scripts/bench).
// AfterFunc below is found by context.AfterFunc and WithCancel for their
// children, and called directly by the socket client.
type callCtx struct {
	c *call // what Value returns for clientLogKey (see ClientLog)

	mu    sync.Mutex
	done  chan struct{} // made when first asked for
	err   error         // context.Canceled once cancelled
	after []afterFunc   // registered by AfterFunc, not yet run or stopped
	next  uint64        // the id of the next AfterFunc
	first [1]afterFunc  // after's room for the usual one, the socket client's
}

// init readies x for c.
func (x *callCtx) init(c *call) {
	x.c = c
	x.after = x.first[:0]
}

// afterFunc is a function AfterFunc registered, and its id for stop.
type afterFunc struct {
	id uint64
	f  func()
}

// closedChan is Done's channel for a context cancelled before anyone
// asked for it.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

func (x *callCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (x *callCtx) Done() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done == nil {
		if x.err != nil {
			x.done = closedChan
		} else {
			x.done = make(chan struct{})
		}
	}
	return x.done
}

func (x *callCtx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

func (x *callCtx) Value(key any) any {
	if key == (clientLogKey{}) {
		return x.c
	}
	return nil
}

// AfterFunc arranges to call f in its own goroutine once the context is
// cancelled, at once if it is already, as context.AfterFunc does; stop
// reports whether it kept f from being started.
func (x *callCtx) AfterFunc(f func()) (stop func() bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		go f()
		return func() bool { return false }
	}
	id := x.next
	x.next++
	x.after = append(x.after, afterFunc{id: id, f: f})
	return func() bool { return x.stopAfter(id) }
}

func (x *callCtx) stopAfter(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, a := range x.after {
		if a.id == id {
			x.after = append(x.after[:i], x.after[i+1:]...)
			return true
		}
	}
	return false
}

// cancel cancels the context; only the first time counts.
func (x *callCtx) cancel() {
	x.mu.Lock()
	if x.err != nil {
		x.mu.Unlock()
		return
	}
	x.err = context.Canceled
	if x.done != nil {
		close(x.done)
	}
	after := x.after
	x.after = nil
	x.mu.Unlock()
	for _, a := range after {
		go a.f()
	}
}

func (x *callCtx) String() string { return "tairseach-mcp call context" }
