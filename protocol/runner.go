package protocol

import (
	"runtime"
	"sync/atomic"
)

// runner runs calls on goroutines it keeps between calls (at most
// maxIdle idle): a fresh goroutine grows its stack to a call's depth by
// copying it several times, a large share of a busy bridge's CPU. And it
// yields to the call it has just handed over: the reader's next step is a
// blocking read of stdin that keeps its processor, so without the yield
// the call waits for another thread to be woken to run it. With the
// writer's yield, these are the tricks kept to hold the performance guard
// (docs/performance.md); calls are otherwise goroutine-per-call.
type runner struct {
	work chan func()
	stop chan struct{}
	idle atomic.Int32
}

// maxIdle bounds the goroutines kept idle; each costs a few KiB of stack
// once the garbage collector has shrunk it.
const maxIdle = 64

func newRunner() *runner { return &runner{work: make(chan func()), stop: make(chan struct{})} }

// run runs f on an idle kept goroutine, or a new one, and lets it start.
func (r *runner) run(f func()) {
	select {
	case r.work <- f:
	default:
		go r.keep(f) // owned by the runner: ends when stopped or past maxIdle
	}
	runtime.Gosched()
}

func (r *runner) keep(f func()) {
	for {
		f()
		if r.idle.Add(1) > maxIdle {
			r.idle.Add(-1)
			return
		}
		select {
		case f = <-r.work:
			r.idle.Add(-1)
		case <-r.stop:
			return
		}
	}
}
