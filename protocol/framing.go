package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// lineReader reads newline-delimited messages of at most max bytes.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	// tail is the last tailSize bytes of the last line that was too long:
	// clients that write the id last (the TypeScript SDK) show it there.
	tail []byte
}

const tailSize = 256

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending ("\n" or "\r\n",
// which the limit does not count). For a line longer than the limit it
// returns tooLong and the line's first bytes, at least as many as the
// read buffer holds, so the message's id may be found, and keeps its last
// bytes in tail; the rest of the line is read and dropped, never held. The line is valid until the next
// call. err is the error that ended the input, after the last line.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	if cap(lr.buf) > 1<<20 {
		lr.buf = nil // do not keep a huge buffer for the rest of the session
	}
	lr.buf, lr.tail = lr.buf[:0], lr.tail[:0]
	for {
		frag, err := lr.br.ReadSlice('\n')
		switch {
		case tooLong:
		case len(lr.buf)+len(frag) > lr.max+len("\r\n"):
			tooLong = true
			if len(lr.buf) == 0 {
				lr.buf = append(lr.buf, frag...)
			}
		default:
			lr.buf = append(lr.buf, frag...)
		}
		if tooLong {
			lr.tail = append(lr.tail, frag...)
			if n := len(lr.tail); n > tailSize {
				lr.tail = lr.tail[:copy(lr.tail, lr.tail[n-tailSize:])]
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(lr.buf, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, tooLong || len(line) > lr.max, err
	}
}

// outbox takes complete messages for the one writer goroutine, and counts
// the bytes produced but not yet written, which the reader and the calls
// wait on (see Server.MaxPendingBytes). It is safe for concurrent use.
type outbox struct {
	w     *bufio.Writer
	limit int
	wake  chan struct{} // tells the writer there is work (buffered, 1)
	done  chan struct{} // closed when the writer has returned
	// yield, when set, is called after the writer has written what was
	// queued, before it looks for more and flushes: messages about to be
	// sent may then join the same write.
	yield func()

	mu      sync.Mutex
	queue   [][]byte
	pending int           // bytes queued or being written
	full    chan struct{} // while pending >= limit: closed when it drops below
	closed  bool          // no more messages are taken
	err     error         // the write error; read after done is closed
}

func newOutbox(w io.Writer, limit int) *outbox {
	return &outbox{w: bufio.NewWriterSize(w, 64<<10), limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues one message (without its newline). It never blocks: the
// bytes are counted, and the reader and the calls wait for room instead.
// Once the outbox is closed, or a write failed, messages are dropped.
func (o *outbox) send(msg []byte) {
	o.mu.Lock()
	if !o.closed {
		o.queue = append(o.queue, msg)
		o.pending += len(msg) + 1
		if o.pending >= o.limit && o.full == nil {
			o.full = make(chan struct{})
		}
	}
	o.mu.Unlock()
	o.poke()
}

func (o *outbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// waitRoom waits until fewer than limit bytes are pending. It reports
// false when stop was closed first or the writer has stopped.
func (o *outbox) waitRoom(stop <-chan struct{}) bool {
	for {
		o.mu.Lock()
		full := o.full
		o.mu.Unlock()
		if full == nil {
			return true
		}
		select {
		case <-full:
		case <-stop:
			return false
		case <-o.done:
			return false
		}
	}
}

// close makes the writer write what is queued, flush and return.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.poke()
}

// run is the writer: the only goroutine that writes to the client. It
// returns when closed and drained, or at the first failed write.
func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		msgs, closed := o.queue, o.closed
		o.queue = nil
		o.mu.Unlock()
		for _, m := range msgs {
			_, err := o.w.Write(m)
			if err == nil {
				err = o.w.WriteByte('\n')
			}
			if o.release(len(m)+1, err) != nil {
				return
			}
		}
		if len(msgs) > 0 {
			if o.yield != nil {
				o.yield()
			}
			continue // more may have come meanwhile: flush once they stop
		}
		if o.release(0, o.w.Flush()) != nil || closed {
			return
		}
		<-o.wake
	}
}

// release counts n bytes as written, or records err, which ends writing.
func (o *outbox) release(n int, err error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pending -= n
	if o.pending < o.limit && o.full != nil {
		close(o.full)
		o.full = nil
	}
	if err != nil {
		o.err, o.closed, o.queue = err, true, nil
	}
	return err
}
