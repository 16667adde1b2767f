package clients

import (
	"testing"
	"time"
)

// clock is a clock a test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// A bucket lets a minute's calls through at once, then one every minute
// ÷ rate, and says how long until the next.
func TestABucketRefillsEvenly(t *testing.T) {
	c := &clock{t: now}
	b := newBucket(6, c.now) // one every 10 s
	for i := range 6 {
		if _, ok := b.take(1); !ok {
			t.Fatalf("call %d of a full bucket refused", i+1)
		}
	}
	if wait, ok := b.take(1); ok || wait != 10*time.Second {
		t.Errorf("the seventh: %v %v, want refused for 10s", wait, ok)
	}
	c.advance(4 * time.Second)
	if wait, ok := b.take(1); ok || wait != 6*time.Second {
		t.Errorf("4 s later: %v %v, want refused for 6s more", wait, ok)
	}
	c.advance(6 * time.Second)
	if _, ok := b.take(1); !ok {
		t.Error("10 s later: refused")
	}
	c.advance(time.Hour)
	if wait, ok := b.take(3); !ok {
		t.Errorf("a batch of 3 after a quiet hour: refused for %v", wait)
	}
	if wait, ok := b.take(4); ok || wait != 10*time.Second {
		t.Errorf("4 more with 3 left: %v %v, want refused for 10s", wait, ok)
	}
	c.advance(time.Minute)
	if _, ok := b.take(100); !ok {
		t.Error("a batch past a minute's calls, with the bucket full: refused")
	}
	if _, ok := b.take(1); ok {
		t.Error("after that batch the bucket is empty")
	}
}
