package protocol

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
)

// Calls that each need more than their share of the budget all finish:
// the oldest that grew goes on past the limit, and when it is done the
// next does, instead of each waiting for the others for good.
func TestCallsThatEachNeedMoreThanTheirShareAllFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit, calls, need, step = 1 << 20, 16, 512 << 10, 64 << 10
		b := newBudget(limit, nil)
		var wg, first sync.WaitGroup
		first.Add(calls)
		for range calls {
			h := b.newHold()
			wg.Go(func() {
				for got := 0; got < need; got += step {
					if got == step {
						// Every call holds its first part, and the budget is full.
						first.Done()
						first.Wait()
					}
					if err := h.Grow(t.Context(), step); err != nil {
						t.Error(err)
						return
					}
				}
				h.finish() // written
			})
		}
		wg.Wait()
		if n := b.inUse(); n != 0 {
			t.Errorf("%d bytes still counted after every call finished", n)
		}
	})
}

// While the oldest call's response waits for a client that does not
// read, no other call passes the limit: the budget holds its limit, plus
// that one response at most.
func TestAResponseNotWrittenHoldsOthersAtTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 1 << 20
		b := newBudget(limit, nil)
		oldest := b.newHold()
		if err := oldest.Grow(t.Context(), 2*limit); err != nil { // alone: it goes past the limit
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		younger := b.newHold()
		done := make(chan error, 1)
		go func() { done <- younger.Grow(ctx, 1) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("a younger call grew past the limit while the oldest's response was unwritten: %v", err)
		default:
		}
		oldest.finish() // the client read it
		if err := <-done; err != nil {
			t.Fatalf("once it was written, the younger call waited on: %v", err)
		}
		cancel()
		younger.finish()
	})
}

// A call waiting for room gives up when its context ends, and a session's
// budget draws on its server's: a full total holds up every session.
func TestGrowWaitsOnEveryLevelAndEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		total := newBudget(100, nil)
		a, b := newBudget(80, total), newBudget(80, total)
		ha := a.newHold()
		ha.charge(70)
		hb := b.newHold()
		if err := hb.Grow(t.Context(), 10); err != nil { // the oldest that grew: may pass the total
			t.Fatal(err)
		}
		hb2 := b.newHold()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- hb2.Grow(ctx, 30) }() // fits b (10+30 ≤ 80), not the total (80+30 > 100)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("grew past the total: %v", err)
		default:
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Grow after its context ended = %v, want context.Canceled", err)
		}
		ha.finish()
		hb.finish()
		hb2.finish()
		if total.inUse() != 0 || a.inUse() != 0 || b.inUse() != 0 {
			t.Errorf("counted after release: total %d, a %d, b %d", total.inUse(), a.inUse(), b.inUse())
		}
	})
}

// Notifications are taken only when they fit, and given back.
func TestNotificationsTakeOnlyRoom(t *testing.T) {
	b := newBudget(100, newBudget(1000, nil))
	if !b.tryTake(60) || b.tryTake(60) {
		t.Fatal("want the first 60 bytes taken, the second refused")
	}
	b.give(60)
	if !b.tryTake(100) {
		t.Fatal("want room again once given back")
	}
	b.give(100)
	if b.inUse() != 0 || b.parent.inUse() != 0 {
		t.Errorf("counted after give: %d, %d", b.inUse(), b.parent.inUse())
	}
}
