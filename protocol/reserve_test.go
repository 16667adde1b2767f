package protocol

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// keep is a Sink that keeps what it is sent, unreleased, as a client that
// has not read it yet.
type keep struct {
	mu   sync.Mutex
	msgs []Message
}

func (k *keep) Send(m Message) {
	k.mu.Lock()
	k.msgs = append(k.msgs, m)
	k.mu.Unlock()
}

// release releases what was sent: the client read it.
func (k *keep) release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range k.msgs {
		k.msgs[i].Release()
	}
	k.msgs = nil
}

// read counts msg against r in pieces of 64 KiB, as a transport reads a
// body.
func read(t *testing.T, r *Reservation, msg string) {
	t.Helper()
	for rest := len(msg); rest > 0; rest -= 64 << 10 {
		if err := r.Grow(t.Context(), min(rest, 64<<10)); err != nil {
			t.Fatal(err)
		}
	}
}

// A message's bytes are counted from the first piece read until its
// response is written: handed to the request, never counted twice, never
// uncounted in between; and released at once when it is refused.
func TestAReservedMessageIsCountedOnceUntilAnswered(t *testing.T) {
	srv := newTestServer(nil)
	ss := srv.NewSession(&keep{}, SessionOptions{})
	defer ss.Close()
	total := srv.total()
	msg := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 200<<10) + `"}}`

	r := srv.Reserve()
	read(t, r, msg)
	if got := total.inUse(); got != int64(len(msg)) {
		t.Fatalf("the server counts %d bytes while the message is read, want %d", got, len(msg))
	}
	out := &keep{}
	if err := ss.HandleReserved(t.Context(), []byte(msg), out, r); err != nil {
		t.Fatal(err)
	}
	r.Release() // spent: does nothing
	if len(out.msgs) != 1 {
		t.Fatalf("%d messages sent, want the response", len(out.msgs))
	}
	want := int64(len(msg) + out.msgs[0].Size())
	if got, session := total.inUse(), ss.budget.inUse(); got != want || session != want {
		t.Errorf("before the response is written the server counts %d bytes and the session %d, want the message and its response, %d", got, session, want)
	}
	if got := total.reading.inUse(); got != 0 {
		t.Errorf("%d bytes still counted as being read once handed over", got)
	}
	out.release()
	if got := total.inUse(); got != 0 {
		t.Errorf("%d bytes counted once the response is written", got)
	}

	refused := srv.Reserve()
	read(t, refused, msg)
	refused.Release()
	refused.Release()
	if got := total.inUse(); got != 0 {
		t.Errorf("%d bytes counted after a refused message was released (twice)", got)
	}
}

// Messages being read take at most half the server's budget, but for
// their first 64 KiB and the oldest: the rest wait, and a small message,
// whose first 64 KiB never wait on that half, is read and answered
// meanwhile.
func TestMessagesBeingReadLeaveRoomForSmallOnes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit, readers, body = 4 << 20, 16, 512 << 10
		srv := newTestServer(nil)
		srv.MaxHeldBytes, srv.MaxTotalHeldBytes = limit, limit
		total := srv.total()
		ctx, hangUp := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		var large []*Reservation
		for range readers { // each reads a body it never finishes
			r := srv.Reserve()
			large = append(large, r)
			wg.Go(func() {
				for range body / (64 << 10) {
					if r.Grow(ctx, 64<<10) != nil {
						return
					}
				}
			})
		}
		synctest.Wait()
		if got, bound := total.reading.inUse(), int64(limit/2+readers*firstPiece+body); got > bound {
			t.Errorf("bodies being read hold %d bytes, past half the budget, their first pieces and the oldest (%d)", got, bound)
		}

		small := srv.Reserve()
		msg := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		if err := small.Grow(t.Context(), len(msg)); err != nil {
			t.Fatal(err)
		}
		ss := srv.NewSession(&keep{}, SessionOptions{})
		defer ss.Close()
		out := &keep{}
		if err := ss.HandleReserved(t.Context(), []byte(msg), out, small); err != nil {
			t.Fatal(err)
		}
		if len(out.msgs) != 1 {
			t.Errorf("the small message got %d messages, want its response", len(out.msgs))
		}
		out.release()

		hangUp() // the large bodies' clients go: their waits end, and they are released
		wg.Wait()
		for _, r := range large {
			r.Release()
		}
		if got := total.inUse(); got != 0 {
			t.Errorf("%d bytes counted after every body was released", got)
		}
	})
}

// Messages that each need more than the level of messages being read,
// read side by side, are all read: the oldest goes on past the level and
// the server's budget, and when it is handed over, the next does.
func TestMessagesLargerThanTheirLevelAreAllRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 1 << 20
		srv := newTestServer(nil)
		srv.MaxHeldBytes, srv.MaxTotalHeldBytes = 4*limit, limit // the level: 512 KiB
		ss := srv.NewSession(&keep{}, SessionOptions{})
		defer ss.Close()
		var wg, first sync.WaitGroup
		const bodies = 4
		first.Add(bodies)
		for i := range bodies {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}`, i, strings.Repeat("p", 700<<10))
			r := srv.Reserve()
			wg.Go(func() {
				for rest, piece := len(msg), 0; rest > 0; rest, piece = rest-64<<10, piece+1 {
					if piece == 1 {
						// Every body holds its first piece.
						first.Done()
						first.Wait()
					}
					if err := r.Grow(t.Context(), min(rest, 64<<10)); err != nil {
						t.Error(err)
						return
					}
				}
				out := &keep{}
				if err := ss.HandleReserved(t.Context(), []byte(msg), out, r); err != nil {
					t.Error(err)
				}
				out.release()
			})
		}
		wg.Wait()
		if got := srv.total().inUse(); got != 0 {
			t.Errorf("%d bytes counted once every message was answered", got)
		}
	})
}

// A message larger than the whole budget is read, and handled without
// waiting for room its own bytes take (it would wait for good).
func TestAMessageLargerThanTheBudgetDoesNotWaitForItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 256 << 10
		srv := newTestServer(nil)
		srv.MaxHeldBytes, srv.MaxTotalHeldBytes = limit, limit
		ss := srv.NewSession(&keep{}, SessionOptions{})
		defer ss.Close()
		msg := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 2*limit) + `"}}`
		r := srv.Reserve()
		read(t, r, msg)
		out := &keep{}
		done := make(chan error, 1)
		go func() { done <- ss.HandleReserved(t.Context(), []byte(msg), out, r) }()
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("HandleReserved waits for room that only its own message takes")
		}
		if len(out.msgs) != 1 {
			t.Errorf("%d messages, want the response", len(out.msgs))
		}
		out.release()
	})
}

// A piece waits for room in the server's budget, whatever the level of
// messages being read has, unless it is the oldest's, and gives up when
// its context ends; the bytes counted before stay counted until released.
func TestAPieceWaitsForTheServersBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 1 << 20
		srv := newTestServer(nil)
		srv.MaxHeldBytes, srv.MaxTotalHeldBytes = limit, limit
		total := srv.total()
		ss := srv.NewSession(&keep{}, SessionOptions{})
		defer ss.Close()
		h := ss.budget.newHold()
		h.charge(limit - 10) // responses a client has not read
		oldest := srv.Reserve()
		if err := oldest.Grow(t.Context(), 1); err != nil { // it never waits
			t.Fatal(err)
		}
		r := srv.Reserve()
		if err := r.Grow(t.Context(), 4); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Grow(ctx, 64) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("grew past the server's budget: %v", err)
		default:
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Grow after its context ended = %v, want context.Canceled", err)
		}
		if got := total.inUse(); got != limit-5 {
			t.Errorf("the server counts %d bytes, want %d", got, limit-5)
		}
		r.Release()
		oldest.Release()
		h.finish()
		if got := total.inUse(); got != 0 {
			t.Errorf("%d bytes counted after release", got)
		}
	})
}
