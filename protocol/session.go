package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// session is the state of one stream.
type session struct {
	srv    *Server
	log    zerolog.Logger
	out    *outbox
	runner *runner

	admitted chan struct{} // one place per tool call running or in line
	sem      chan struct{} // one slot per running tool call

	mu       sync.Mutex
	stopping bool          // no new calls are started
	stopped  chan struct{} // closed when stopping is set
	calls    sync.WaitGroup
	inflight map[string]*call // by id as sent
	listens  int              // open subscriptions/listen streams

	version    atomic.Pointer[string] // negotiated legacy version; nil before initialize
	modernSeen atomic.Bool            // a modern (2026-07-28) request was served
	logLevel   atomic.Int32           // minimum level sent to the client; logOff when disabled
}

// coalesceFrom is the number of running calls above which the writer
// yields before it flushes; with fewer, yielding would only delay the
// response.
const coalesceFrom = 8

// maxListens bounds the subscriptions/listen streams open at once in a
// session. They are not tool calls, so they take no slot of the in-flight
// limit (streams that never end would otherwise starve calls), but each
// holds a goroutine: a client needs one or two.
const maxListens = 64

func (ss *session) serve(ctx context.Context, r io.Reader) error {
	// Calls keep ctx's values but not its cancellation: cancelling Serve's
	// ctx ends them only after the grace period, through cancelCalls.
	base := context.WithoutCancel(ctx)
	defer close(ss.runner.stop)
	grace := orDefault(ss.srv.ShutdownGrace, DefaultShutdownGrace)

	// The writer is owned by serve, which waits for it below.
	go ss.out.run()
	// The reader is owned by serve: it ends at EOF, on a read error, or
	// once the session stops. After a cancellation serve does not wait for
	// it (a blocked Read cannot be interrupted), but it starts no call
	// once stopping is set.
	readDone := make(chan error, 1)
	go func() { readDone <- ss.read(base, r) }()

	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
	case <-ss.out.done:
	}
	ss.stop()

	// The calls in flight finish: without limit after EOF (each call is
	// bounded by its own timeout), within the grace period on shutdown,
	// which may also come while they finish (a client closes stdin, then
	// signals). A failed write cancels them at once.
	callsDone := make(chan struct{})
	go func() { ss.calls.Wait(); close(callsDone) }() // ends when every call has returned
	select {
	case <-callsDone:
	case <-ss.out.done:
	case <-ctx.Done():
		select {
		case <-callsDone:
		case <-ss.out.done:
		case <-time.After(grace):
			ss.log.Warn().Msg("shutdown grace period over, cancelling calls in flight")
		}
	}
	ss.cancelCalls()
	// On shutdown, neither a tool provider that ignores cancellation nor a
	// client that stopped reading keeps Serve from returning.
	wait := func(done <-chan struct{}) bool {
		if ctx.Err() == nil {
			<-done
			return true
		}
		select {
		case <-done:
			return true
		case <-time.After(grace):
			return false
		}
	}
	if !wait(callsDone) {
		return errors.New("calls in flight did not end at shutdown")
	}
	ss.out.close()
	if !wait(ss.out.done) {
		return errors.New("stdout blocked at shutdown: responses could not be written")
	}
	if ss.out.err != nil {
		return fmt.Errorf("writing to the client: %w", ss.out.err)
	}
	if readErr != nil {
		return fmt.Errorf("reading from the client: %w", readErr)
	}
	return nil
}

// cancelCalls cancels every call in flight. Each call's context is its
// own, not derived from one the session cancels: calls would all register
// with, and contend for, that one parent.
func (ss *session) cancelCalls() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.inflight {
		c.cancel()
	}
}

// stop refuses new calls and ends the listen streams, which never end by
// themselves, so that their final results are written with the other
// responses.
func (ss *session) stop() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.stopping = true
	close(ss.stopped)
	for _, c := range ss.inflight {
		if c.info.flags&stream != 0 {
			c.cancel()
		}
	}
}

// read reads and handles lines until the input ends or the session stops.
// It waits for room before each line: a client that does not read its
// responses gets no more of them.
func (ss *session) read(ctx context.Context, r io.Reader) error {
	lr := newLineReader(r, orDefault(ss.srv.MaxMessageSize, DefaultMaxMessageSize))
	for ss.out.waitRoom(ss.stopped) {
		line, tooLong, err := lr.next()
		if tooLong {
			ss.tooLong(line, lr.tail)
		} else {
			ss.handleLine(ctx, line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// tooLong answers a message longer than the limit, of which prefix is
// the start and tail the end: with its id, when the start shows it, or
// the end shows it as the object's last member. A response from the
// client, a notification, or a message whose id does not show, is not
// answered.
func (ss *session) tooLong(prefix, tail []byte) {
	max := orDefault(ss.srv.MaxMessageSize, DefaultMaxMessageSize)
	ss.log.Warn().Int("max_bytes", max).Msg("message too long")
	id, response := idFromPrefix(prefix)
	if id == nil {
		id = idAtEnd(tail)
	}
	if id != nil && !response {
		ss.out.send(encodeError(id, &Error{
			Code:    CodeInvalidRequest,
			Message: fmt.Sprintf("message longer than %d bytes; raise --max-message-size to accept it", max),
		}))
	}
}

// handleLine handles one line: a message or a batch.
func (ss *session) handleLine(ctx context.Context, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] == '[' {
		ss.handleBatch(ctx, line)
		return
	}
	rq, ignore, errID, err := decodeMessage(line)
	switch {
	case err != nil:
		ss.log.Debug().Err(err).Msg("bad message")
		ss.out.send(encodeError(errID, WireError(err)))
	case ignore:
		ss.log.Debug().Msg("ignoring a response or an unreadable notification from the client")
	default:
		ss.dispatch(ctx, &rq, nil)
	}
}
