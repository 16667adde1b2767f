package cli

import (
	"io"
	"sync"
	"time"
)

// Bounds of the log buffer in front of stderr.
const (
	// logBufferSize bounds the bytes of log lines waiting for stderr.
	logBufferSize = 1 << 20
	// logFlushWait bounds how long the end of the process waits for
	// stderr to take what is still buffered.
	logFlushWait = time.Second
)

// logBuffer stands between the loggers and stderr so that logging never
// blocks serving. The MCP specification lets a client ignore the bridge's
// stderr, and a pipe nobody reads is full after 64 KiB: writing to it
// directly would then stop every call that logs, and the session with
// them. Write copies a line into a buffer of at most max bytes and
// returns at once; one goroutine writes the buffer to out. Lines that do
// not fit are dropped and counted (from the first one dropped until the
// writer takes the buffer, so the lines that are written keep their
// order), and once out has taken the lines before them, dropped reports
// the count, as a line of its own. It is safe for concurrent use.
type logBuffer struct {
	out     io.Writer
	max     int
	dropped func(n int) // writes the line reporting n dropped lines to out
	wait    time.Duration

	mu      sync.Mutex
	buf     []byte // whole lines waiting for the writer
	lost    int    // lines dropped since the writer last took buf
	closing bool
	wake    chan struct{} // there is work, or closing is set (buffered, 1)
	done    chan struct{} // closed when the writer has returned
}

// newLogBuffer starts the writer of a buffer in front of out. The writer
// runs until Close; Close waits for it, within a bound.
func newLogBuffer(out io.Writer, max int, dropped func(n int)) *logBuffer {
	b := &logBuffer{out: out, max: max, dropped: dropped, wait: logFlushWait,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go b.run()
	return b
}

// Write buffers p, a whole log line, or drops it when the buffer is full
// or already dropping. It never blocks on out and never fails.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost > 0 || len(b.buf)+len(p) > b.max {
		b.lost++
		return len(p), nil
	}
	if len(b.buf)+len(p) > cap(b.buf) {
		// Grown by hand: append's growth could take the capacity, and so
		// the memory held, past max.
		grown := make([]byte, len(b.buf), min(b.max, 2*cap(b.buf)+len(p)))
		copy(grown, b.buf)
		b.buf = grown
	}
	b.buf = append(b.buf, p...)
	b.poke()
	return len(p), nil
}

func (b *logBuffer) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// run is the writer: the only goroutine that writes to out. It returns
// once closing is set and nothing is left to write. Write errors are
// ignored: there is nowhere else to report them.
func (b *logBuffer) run() {
	defer close(b.done)
	// Two buffers take turns: Write fills one while this writes the
	// other, and spare is the one not in Write's hands.
	var spare []byte
	for {
		b.mu.Lock()
		lines, lost, closing := b.buf, b.lost, b.closing
		b.buf, b.lost = spare, 0
		b.mu.Unlock()
		if len(lines) > 0 {
			_, _ = b.out.Write(lines)
		}
		if lost > 0 {
			b.dropped(lost)
		}
		spare = lines[:0]
		if len(lines) == 0 && lost == 0 {
			if closing {
				return
			}
			<-b.wake
		}
	}
}

// Close writes what is buffered and stops the writer. It waits at most
// b.wait for out to take it: a stderr nobody reads must not keep the
// process from ending. Lines written after Close may be lost.
func (b *logBuffer) Close() {
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	b.poke()
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case <-b.done:
	case <-t.C:
	}
}
