package protocol

import "sync/atomic"

// runner runs calls on goroutines it keeps between calls (at most
// maxIdle idle): a fresh goroutine grows its stack to a call's depth by
// copying it several times, a large share of a busy bridge's CPU (see
// docs/performance.md). With the writer's yield, one of the two tricks
// kept to hold the performance guard; calls are otherwise goroutine-per-call.
type runner struct {
	work chan func()
	stop chan struct{}
	idle atomic.Int32
}

const maxIdle = 16

func newRunner() *runner { return &runner{work: make(chan func()), stop: make(chan struct{})} }

// run runs f on an idle kept goroutine, or a new one.
func (r *runner) run(f func()) {
	select {
	case r.work <- f:
	default:
		go r.keep(f) // owned by the runner: ends when stopped or past maxIdle
	}
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
