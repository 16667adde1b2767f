package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"
)

// serve runs the session over one newline-delimited stream: it reads
// requests from r until EOF, ctx's end or a failed write to out, then
// lets the calls in flight finish (within the grace period on shutdown)
// and writes their responses. See Server.Serve.
func (ss *session) serve(ctx context.Context, r io.Reader, out *outbox) error {
	// Calls keep ctx's values but not its cancellation: cancelling Serve's
	// ctx ends them only after the grace period, through cancelCalls.
	base := context.WithoutCancel(ctx)
	defer close(ss.runner.stop)
	grace := orDefault(ss.srv.ShutdownGrace, DefaultShutdownGrace)
	out.yield = func() {
		// With many calls running, responses come in runs: yielding once
		// lets the calls that are ready queue theirs, so that one write
		// carries several (each write is a system call here and a wake-up
		// in the client), which makes most of the cost of a call under
		// pipelined load.
		if len(ss.sem) > coalesceFrom {
			runtime.Gosched()
		}
	}

	// The writer is owned by serve, which waits for it below.
	go out.run()
	// The reader is owned by serve: it ends at EOF, on a read error, or
	// once the session stops. After a cancellation serve does not wait for
	// it (a blocked Read cannot be interrupted), but it starts no call
	// once stopping is set.
	readDone := make(chan error, 1)
	go func() { readDone <- ss.read(base, r, out) }()

	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
	case <-out.done:
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
	case <-out.done:
	case <-ctx.Done():
		select {
		case <-callsDone:
		case <-out.done:
		case <-time.After(grace):
			ss.log.Warn().Msg("shutdown grace period over, cancelling calls in flight")
		case <-ss.srv.Hurry:
			ss.log.Warn().Msg("asked again to stop: cancelling calls in flight")
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
	out.close()
	if !wait(out.done) {
		return errors.New("stdout blocked at shutdown: responses could not be written")
	}
	if out.err != nil {
		return fmt.Errorf("writing to the client: %w", out.err)
	}
	if readErr != nil {
		return fmt.Errorf("reading from the client: %w", readErr)
	}
	return nil
}

// read reads and handles lines until the input ends or the session stops.
// Before each line it waits until the budget has room: a client that does
// not read its responses, or a backend that does not take its requests,
// gets no more requests read.
func (ss *session) read(ctx context.Context, r io.Reader, out *outbox) error {
	lr := newLineReader(r, orDefault(ss.srv.MaxMessageSize, DefaultMaxMessageSize))
	for ss.budget.waitRoom(ctx, ss.stopped) {
		line, tooLong, err := lr.next()
		if tooLong {
			ss.tooLong(out, line, lr.tail)
		} else {
			ss.handleLine(ctx, out, line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}
