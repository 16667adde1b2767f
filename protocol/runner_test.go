package protocol

import (
	"runtime"
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
