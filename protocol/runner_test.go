package protocol

import (
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// The runner runs each function at once, on a kept goroutine when one is
// idle and on a new one otherwise, keeps at most maxIdle, and lets them
// all go when stopped.
func TestRunnerKeepsGoroutinesBetweenCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := runtime.NumGoroutine()
		r := newRunner()
		block, done := make(chan struct{}), make(chan struct{})
		r.run(func() { <-block })
		r.run(func() { close(done) }) // runs while the first is blocked
		<-done
		close(block)
		synctest.Wait()
		if got := r.idle.Load(); got != 2 {
			t.Fatalf("%d idle goroutines after two calls, want 2", got)
		}
		r.run(func() {}) // taken by an idle one: no new goroutine
		synctest.Wait()
		if n := runtime.NumGoroutine() - base; n != 2 {
			t.Errorf("%d goroutines kept, want 2", n)
		}
		for range maxIdle + 4 {
			r.run(func() { <-block }) // block is closed: each returns at once
		}
		synctest.Wait()
		if got := r.idle.Load(); got > maxIdle {
			t.Errorf("%d idle goroutines, want at most %d", got, maxIdle)
		}
		close(r.stop)
		synctest.Wait()
		if n := runtime.NumGoroutine() - base; n != 0 {
			t.Errorf("%d goroutines left after stop", n)
		}
	})
}

// run lets the call it hands over start before it returns, even on one
// processor: the session's reader goes on to a read that would otherwise
// hold the processor while the call waits.
func TestRunnerLetsTheCallStart(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		defer close(r.stop) // the bubble waits for the kept goroutines to end
		started := 0
		for range 100 {
			var began atomic.Bool
			done := make(chan struct{})
			r.run(func() { began.Store(true); close(done) })
			if began.Load() {
				started++
			}
			<-done
		}
		// Nearly all, and none without the yield. The scheduler may pick
		// the yielding goroutine first now and then (it checks its global
		// queue every 61st turn, for fairness), as may other tests'
		// goroutines still ending: the floor leaves room for both.
		if started < 50 {
			t.Errorf("the call had started when run returned %d times in 100, want nearly all", started)
		}
	})
}
