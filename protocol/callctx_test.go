package protocol

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newCallCtx() (*call, *callCtx) {
	c := &call{}
	c.cx.init(c)
	return c, &c.cx
}

// waitClosed fails unless ch closes within a few seconds.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

func TestCallCtxIsAContext(t *testing.T) {
	c, x := newCallCtx()
	var ctx context.Context = x
	if _, ok := ctx.Deadline(); ok {
		t.Error("a deadline")
	}
	if ctx.Value(clientLogKey{}) != c || ctx.Value("other") != nil {
		t.Error("Value does not give the call for clientLogKey alone")
	}
	done := ctx.Done()
	if done != ctx.Done() {
		t.Error("Done gives a new channel each time")
	}
	select {
	case <-done:
		t.Fatal("done before cancel")
	default:
	}
	if ctx.Err() != nil {
		t.Fatal("an error before cancel")
	}
	x.cancel()
	x.cancel() // a second time changes nothing
	waitClosed(t, done, "Done closing")
	if ctx.Err() != context.Canceled {
		t.Errorf("Err = %v, want context.Canceled", ctx.Err())
	}

	// Done asked for only after the cancellation is closed too.
	_, y := newCallCtx()
	y.cancel()
	waitClosed(t, y.Done(), "Done closing")
}

func TestCallCtxAfterFunc(t *testing.T) {
	_, x := newCallCtx()
	var ran [3]atomic.Int32
	ranCh := make(chan int, 10)
	fn := func(i int) func() { return func() { ran[i].Add(1); ranCh <- i } }
	stop0 := x.AfterFunc(fn(0))
	stop1 := x.AfterFunc(fn(1))
	stop2 := x.AfterFunc(fn(2))
	if !stop1() {
		t.Error("stop before the cancellation did not stop")
	}
	if stop1() {
		t.Error("a second stop reported stopping")
	}
	x.cancel()
	got := map[int]bool{<-ranCh: true, <-ranCh: true}
	if !got[0] || !got[2] {
		t.Errorf("ran %v, want 0 and 2", got)
	}
	select {
	case i := <-ranCh:
		t.Errorf("function %d ran again, or a stopped one ran", i)
	case <-time.After(50 * time.Millisecond):
	}
	if stop0() || stop2() {
		t.Error("stop after the function started reported stopping")
	}

	// Registered after the cancellation: runs at once.
	late := make(chan struct{})
	if x.AfterFunc(func() { close(late) })() {
		t.Error("stop of a function registered after the cancellation reported stopping")
	}
	waitClosed(t, late, "the late function running")
}

// The standard library's derived contexts and context.AfterFunc work on
// a callCtx through its AfterFunc, without a goroutine of their own.
func TestCallCtxWithTheContextPackage(t *testing.T) {
	c, x := newCallCtx()
	child, cancelChild := context.WithTimeout(x, time.Hour)
	defer cancelChild()
	if child.Value(clientLogKey{}) != c {
		t.Error("a derived context does not find the call")
	}
	ran := make(chan struct{})
	context.AfterFunc(x, func() { close(ran) })
	stopped := false
	stop := context.AfterFunc(x, func() { stopped = true })
	stop()
	x.cancel()
	waitClosed(t, child.Done(), "the derived context ending")
	waitClosed(t, ran, "context.AfterFunc's function running")
	if child.Err() != context.Canceled {
		t.Errorf("derived Err = %v", child.Err())
	}
	time.Sleep(20 * time.Millisecond)
	if stopped {
		t.Error("a stopped context.AfterFunc ran")
	}
}

// Run with -race: cancellation, registration and stopping from many
// goroutines at once; each function runs at most once, and every one not
// stopped runs.
func TestCallCtxConcurrent(t *testing.T) {
	for range 50 {
		_, x := newCallCtx()
		var runs, stopped atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stop := x.AfterFunc(func() { runs.Add(1) })
				if i%2 == 0 && stop() {
					stopped.Add(1)
				}
				_ = x.Done()
				_ = x.Err()
			}()
		}
		wg.Add(1)
		go func() { defer wg.Done(); x.cancel() }()
		wg.Wait()
		deadline := time.Now().Add(5 * time.Second)
		for runs.Load()+stopped.Load() != 8 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if r, s := runs.Load(), stopped.Load(); r+s != 8 {
			t.Fatalf("%d ran and %d were stopped, of 8", r, s)
		}
	}
}
