package mcphttp

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// mailbox is a protocol.Sink for one HTTP response: messages wait in it
// for the goroutine that writes the response. Send never blocks: what it
// queues was counted against the session's budget. Once closed (the
// response is over or gone), messages are released as they come.
type mailbox struct {
	wake chan struct{} // there is something to take (buffered, 1)
	done chan struct{} // closed by close

	mu     sync.Mutex
	queue  []protocol.Message
	closed bool
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1), done: make(chan struct{})} }

// Send queues m for the writer, or releases it once the mailbox is closed.
func (mb *mailbox) Send(m protocol.Message) {
	if !mb.take(m) {
		m.Release()
	}
}

// take queues m for the writer and reports true, or reports false once
// the mailbox is closed, leaving m to the caller.
func (mb *mailbox) take(m protocol.Message) bool {
	mb.mu.Lock()
	if mb.closed {
		mb.mu.Unlock()
		return false
	}
	mb.queue = append(mb.queue, m)
	mb.mu.Unlock()
	select {
	case mb.wake <- struct{}{}:
	default:
	}
	return true
}

// closeKeeping closes mb as close does, but returns the requests of the
// server's still queued instead of releasing them.
func (mb *mailbox) closeKeeping() (requests []protocol.Message) {
	q := mb.shut()
	for i := range q {
		if q[i].Request() {
			requests = append(requests, q[i])
		} else {
			q[i].Release()
		}
	}
	return requests
}

// drain returns what is queued, and empties the queue.
func (mb *mailbox) drain() []protocol.Message {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	q := mb.queue
	mb.queue = nil
	return q
}

// close makes later messages be released at once, and releases those
// queued.
func (mb *mailbox) close() { release(mb.shut()) }

// shut closes mb and returns what was queued, to its caller to release.
func (mb *mailbox) shut() []protocol.Message {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if !mb.closed {
		mb.closed = true
		close(mb.done)
	}
	q := mb.queue
	mb.queue = nil
	return q
}

func release(ms []protocol.Message) {
	for i := range ms {
		ms[i].Release()
	}
}

// sseWriter writes Server-Sent Events to a response, each message an
// event of its own, flushed when no more are queued. A client that stops
// reading, or reads too slowly, loses its stream, not the bridge's
// memory (see stallWriter).
type sseWriter struct {
	sw *stallWriter
	bw *bufio.Writer
}

// startSSE sends the headers of an event stream.
func startSSE(w http.ResponseWriter, stall time.Duration, extra func(http.Header)) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies pass events on at once
	if extra != nil {
		extra(h)
	}
	w.WriteHeader(http.StatusOK)
	sw := newStallWriter(w, stall)
	return &sseWriter{sw: sw, bw: bufio.NewWriterSize(sw, 32<<10)}
}

// event writes one message as an event and releases it: none for the
// end of a request that gets no response.
func (s *sseWriter) event(m *protocol.Message) error {
	defer m.Release()
	if m.Size() == 0 {
		return nil
	}
	if _, err := s.bw.WriteString("event: message\ndata: "); err != nil {
		return err
	}
	if _, err := m.WriteTo(s.bw); err != nil {
		return err
	}
	_, err := s.bw.WriteString("\n\n")
	return err
}

// comment writes an SSE comment, which keeps idle connections open.
func (s *sseWriter) comment() error {
	if _, err := s.bw.WriteString(":\n\n"); err != nil {
		return err
	}
	return s.flush()
}

// flush writes what is buffered: the client has caught up.
func (s *sseWriter) flush() error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	return s.sw.Flush()
}

// errGone is a stream's end because its client went away.
var errGone = errors.New("client gone")

// pump writes what mb receives to s as events until final reports a
// message written as the last (the response), ctx ends (the client is
// gone) or done is closed. Every message it takes is released. keepAlive,
// when positive, is the period of comments on an otherwise idle stream.
func pump(ctx context.Context, done <-chan struct{}, mb *mailbox, s *sseWriter, keepAlive time.Duration, final func(*protocol.Message) bool) error {
	var tick <-chan time.Time
	if keepAlive > 0 {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		msgs := mb.drain()
		for i := range msgs {
			last := final(&msgs[i])
			if err := s.event(&msgs[i]); err != nil {
				release(msgs[i+1:])
				return err
			}
			if last {
				release(msgs[i+1:])
				return s.flush()
			}
		}
		if len(msgs) > 0 {
			if err := s.flush(); err != nil {
				return err
			}
		}
		select {
		case <-mb.wake:
		case <-tick:
			if err := s.comment(); err != nil {
				return err
			}
		case <-ctx.Done():
			return errGone
		case <-done:
			return nil
		}
	}
}
