package protocol

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// shareRun drives a FairShare from goroutines, one per Acquire, inside a
// synctest bubble: each step waits until every goroutine is blocked, so
// the order of arrivals is the order of the calls.
type shareRun struct {
	t       *testing.T
	f       *FairShare
	ctx     context.Context // ends with the test: the waiters left give up
	granted chan string
	held    map[string]int
}

func newShareRun(t *testing.T, size int, limit func(Principal) int) *shareRun {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &shareRun{t: t, f: NewFairShare(size, limit), ctx: ctx, granted: make(chan string, 1000), held: map[string]int{}}
}

func who(name string) Principal { return Principal{Kind: PrincipalSession, ID: name} }

// want starts n calls of name waiting for a slot; each says when granted.
func (r *shareRun) want(name string, n int) {
	for range n {
		go func() {
			if err := r.f.Acquire(r.ctx, who(name)); err == nil {
				r.granted <- name
			}
		}()
		synctest.Wait()
	}
}

// grants returns, in order, who was granted since the last look.
func (r *shareRun) grants() string {
	synctest.Wait()
	var got []string
	for {
		select {
		case name := <-r.granted:
			got = append(got, name)
			r.held[name]++
		default:
			return strings.Join(got, " ")
		}
	}
}

// release gives back one of name's slots.
func (r *shareRun) release(name string) {
	r.held[name]--
	r.f.Release(who(name))
}

func (r *shareRun) expect(what, want string) {
	r.t.Helper()
	if got := r.grants(); got != want {
		r.t.Errorf("%s: granted %q, want %q", what, got, want)
	}
}

func TestFairShare(t *testing.T) {
	t.Run("a principal alone holds every slot, and waits past them", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newShareRun(t, 4, nil)
			r.want("a", 6)
			r.expect("a alone", "a a a a")
			r.release("a")
			r.expect("a slot free", "a")
			r.release("a")
			r.release("a")
			r.expect("two free", "a")
		})
	})
	t.Run("another principal's call waits only for the first slot to come free", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newShareRun(t, 4, nil)
			r.want("a", 20)
			r.grants()
			r.want("b", 1)
			r.expect("b arrives, all held", "")
			r.release("a")
			r.expect("the first free slot", "b")
		})
	})
	t.Run("while others wait, a principal holds at most its share", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newShareRun(t, 4, nil)
			r.want("a", 20)
			r.grants()
			r.want("b", 20)
			var got []string
			for range 4 {
				r.release("a")
				got = append(got, r.grants())
			}
			if s := strings.Join(got, " "); s != "b b a a" {
				t.Errorf("four slots free one by one: granted %q, want b first, up to ⌈4÷2⌉, then in turn", s)
			}
			if r.held["a"] != 2 || r.held["b"] != 2 {
				t.Errorf("held a=%d b=%d, want 2 each", r.held["a"], r.held["b"])
			}
			r.release("b")
			r.expect("a is at its share: b's slot comes back to b", "b")
		})
	})
	t.Run("each slot that comes free goes to the next principal in turn", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newShareRun(t, 3, nil)
			r.want("a", 6)
			r.grants()
			r.want("b", 5)
			r.want("c", 5)
			r.want("d", 5)
			var got []string
			for _, name := range []string{"a", "a", "a", "b", "c"} {
				r.release(name)
				got = append(got, r.grants())
			}
			// Four principals share 3 slots, a share of one each: a,
			// over it, is passed over until it holds none.
			if s := strings.Join(got, " "); s != "b c d a b" {
				t.Errorf("grants in turn: %q, want %q", s, "b c d a b")
			}
		})
	})
	t.Run("no slot stays free while only principals over their share wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newShareRun(t, 4, nil)
			r.want("b", 2)
			r.want("a", 2)
			r.grants()
			r.want("a", 3)
			r.expect("a waits at its share of 2", "")
			r.release("b")
			r.expect("b waits for nothing: a takes the free slot", "a")
			r.release("b")
			r.expect("b is gone: a alone", "a")
		})
	})
	t.Run("a principal's own limit holds whatever room there is", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			limit := func(p Principal) int {
				if p.ID == "a" {
					return 2
				}
				return 0
			}
			r := newShareRun(t, 8, limit)
			r.want("a", 5)
			r.expect("a alone, limited to 2", "a a")
			r.want("b", 1)
			r.expect("b takes a free slot at once", "b")
			r.release("a")
			r.expect("a below its limit again", "a")
		})
	})
	t.Run("a limit that changes holds from the principal's next call on", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var limitA atomic.Int64
			limitA.Store(1)
			limit := func(p Principal) int {
				if p.ID == "a" {
					return int(limitA.Load())
				}
				return 0
			}
			r := newShareRun(t, 8, limit)
			r.want("a", 3)
			r.expect("a limited to 1", "a")
			limitA.Store(3)
			r.want("a", 1)
			r.expect("raised to 3: the next call finds room for a waiter too", "a a")
			for range 3 {
				r.release("a")
			}
			r.expect("the last waiter", "a")
			r.release("a")
			limitA.Store(1)
			r.want("a", 2)
			r.expect("lowered: one again", "a")
		})
	})
	t.Run("a waiter whose context ends takes no slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newShareRun(t, 1, nil)
			r.want("a", 1)
			r.grants()
			ctx, cancel := context.WithCancel(context.Background())
			errs := make(chan error, 1)
			go func() { errs <- r.f.Acquire(ctx, who("b")) }()
			synctest.Wait()
			cancel()
			if err := <-errs; err != context.Canceled {
				t.Errorf("Acquire = %v, want context.Canceled", err)
			}
			r.want("c", 1)
			r.release("a")
			r.expect("the slot goes past the cancelled waiter", "c")
			if all, b := r.f.Held(who("b")); all != 1 || b != 0 {
				t.Errorf("held %d in all, %d by b", all, b)
			}
		})
	})
}

// Many principals acquiring, holding and cancelling at random never hold
// more slots than there are, and every slot comes back.
func TestFairShareUnderLoad(t *testing.T) {
	const size, principals, calls = 5, 7, 3000
	f := NewFairShare(size, func(p Principal) int {
		if p.ID == "p0" {
			return 2
		}
		return 0
	})
	var inUse, peak atomic.Int32
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			p := who(fmt.Sprintf("p%d", i%principals))
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.N(200))*time.Microsecond)
			defer cancel()
			if f.Acquire(ctx, p) != nil {
				return
			}
			if n := inUse.Add(1); n > size {
				t.Errorf("%d slots in use of %d", n, size)
			} else {
				for n > peak.Load() && !peak.CompareAndSwap(peak.Load(), n) {
				}
			}
			if _, its := f.Held(p); p.ID == "p0" && its > 2 {
				t.Errorf("p0 holds %d past its limit of 2", its)
			}
			time.Sleep(time.Duration(rand.N(50)) * time.Microsecond)
			inUse.Add(-1)
			f.Release(p)
		})
	}
	wg.Wait()
	if all, _ := f.Held(who("p1")); all != 0 || len(f.byWho) != 0 || len(f.turn) != 0 {
		t.Errorf("after the calls: %d held, %d principals kept, %d waiting", all, len(f.byWho), len(f.turn))
	}
}

func BenchmarkFairShare(b *testing.B) {
	f := NewFairShare(16, nil)
	p := who("a")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Acquire(ctx, p); err != nil {
			b.Fatal(err)
		}
		f.Release(p)
	}
}

// BenchmarkFairShareContended is the pipelined case: 64 calls of one
// principal in flight for 16 slots, so that most wait their turn.
func BenchmarkFairShareContended(b *testing.B) {
	f := NewFairShare(16, nil)
	p := who("a")
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f.Acquire(ctx, p); err != nil {
				b.Error(err)
				return
			}
			runtime.Gosched() // holds the slot a moment, as a call does
			f.Release(p)
		}
	})
}
