package clients

import (
	"sync"
	"time"
)

// bucket is a rate of calls, a token bucket of perMinute calls refilled
// evenly: a client may make a burst of a minute's calls after a quiet
// minute, and perMinute calls a minute on average. It keeps the bucket as
// the time at which it would be full (the generic cell rate algorithm),
// in whole nanoseconds, so that its answers are exact. Its methods are
// safe for concurrent use.
type bucket struct {
	perMinute int
	every     time.Duration // between two calls, on average
	now       func() time.Time

	mu   sync.Mutex
	full time.Time // when the bucket is full again, were no more calls made
}

func newBucket(perMinute int, now func() time.Time) *bucket {
	return &bucket{perMinute: perMinute, every: time.Minute / time.Duration(perMinute), now: now, full: now()}
}

// take takes n calls from the bucket, and reports true; or, when it has
// not as many, takes none and returns how long until it has. A batch of
// more calls than a minute's takes a whole minute's.
func (b *bucket) take(n int) (retryAfter time.Duration, ok bool) {
	n = min(n, b.perMinute)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	full := b.full
	if full.Before(now) {
		full = now
	}
	full = full.Add(time.Duration(n) * b.every)
	if wait := full.Sub(now) - time.Duration(b.perMinute)*b.every; wait > 0 {
		return wait, false
	}
	b.full = full
	return 0, true
}
