package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"
)

// Serve reads requests from r and writes responses and notifications to w
// until r reaches EOF, ctx is cancelled, or a write to w fails: the
// session of a client at the other end of one stream, such as stdio,
// whose principal is the process.
//
// On EOF it lets in-flight requests finish, writes their responses and
// returns nil. On cancellation of ctx it does the same within
// ShutdownGrace, then cancels what is left. A failed write ends the session
// at once and is returned. Serve does not close r or w. If r blocks after
// ctx is cancelled, the goroutine reading it stays blocked until r returns;
// the caller owns r and may close it.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.ServeSession(ctx, r, w, SessionOptions{})
}

// ServeSession is Serve with the session's options given, such as a named
// client's principal and view. Its Transport defaults to "stdio" and its
// Principal to the process.
func (s *Server) ServeSession(ctx context.Context, r io.Reader, w io.Writer, o SessionOptions) error {
	if s.Tools == nil && (o.Providers == nil || o.Providers.Tools == nil) {
		return errors.New("protocol: Server.Tools is nil")
	}
	if o.Transport == "" {
		o.Transport = "stdio"
	}
	if o.Principal.Kind == "" {
		o.Principal = Principal{Kind: PrincipalProcess}
	}
	out := newOutbox(w)
	return serveStream(ctx, s.NewSession(out, o), r, out)
}

// serveStream runs sess over one newline-delimited stream, as a transport
// does, through the session's Handle, Drained and Close: it reads
// requests from r until EOF, ctx's end or a failed write to out, then lets
// the calls in flight finish (within the grace period on shutdown) and
// writes their responses.
func serveStream(ctx context.Context, sess *Session, r io.Reader, out *outbox) error {
	srv := sess.srv
	// Calls keep ctx's values but not its cancellation: cancelling Serve's
	// ctx ends them only after the grace period, through Close.
	base := context.WithoutCancel(ctx)
	grace := orDefault(srv.ShutdownGrace, DefaultShutdownGrace)
	out.yield = func() {
		// With many calls running, responses come in runs: yielding once
		// lets the calls that are ready queue theirs, so that one write
		// carries several (each write is a system call here and a wake-up
		// in the client), which makes most of the cost of a call under
		// pipelined load.
		if sess.running() > coalesceFrom {
			runtime.Gosched()
		}
	}

	// The writer is owned by serveStream, which waits for it below.
	go out.run()
	// The reader is owned by serveStream: it ends at EOF, on a read error,
	// or once the session stops. After a cancellation serveStream does
	// not wait for it (a blocked Read cannot be interrupted), but the
	// session starts no call once drained.
	readDone := make(chan error, 1)
	go func() { readDone <- readStream(base, sess, r, out) }()

	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
	case <-out.done:
	}

	// The calls in flight finish: without limit after EOF (each call is
	// bounded by its own timeout), within the grace period on shutdown,
	// which may also come while they finish (a client closes stdin, then
	// signals). A failed write cancels them at once.
	drained := sess.Drained()
	select {
	case <-drained:
	case <-out.done:
	case <-ctx.Done():
		select {
		case <-drained:
		case <-out.done:
		case <-time.After(grace):
			sess.log.Warn().Msg("shutdown grace period over, cancelling calls in flight")
		case <-srv.Hurry:
			sess.log.Warn().Msg("asked again to stop: cancelling calls in flight")
		}
	}
	// Close cancels the calls left and waits for them. On shutdown,
	// neither a tool provider that ignores cancellation nor a client that
	// stopped reading keeps Serve from returning.
	closed := make(chan struct{})
	go func() { sess.Close(); close(closed) }() // ends when every call has returned
	// A call this client parked for its answers can get them from no one
	// else: it is cancelled.
	srv.cancelParked(sess)
	// After EOF the session waits for done without limit, until shutdown
	// (a client that closed stdin then signals); then within the grace
	// period.
	wait := func(done <-chan struct{}) bool {
		select {
		case <-done:
			return true
		case <-ctx.Done():
		}
		select {
		case <-done:
			return true
		case <-time.After(grace):
			return false
		}
	}
	if !wait(closed) {
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

// readStream reads and handles lines until the input ends or the session
// stops. Before each line it waits until the budget has room: a client
// that does not read its responses, or a backend that does not take its
// requests, gets no more requests read.
func readStream(ctx context.Context, sess *Session, r io.Reader, out Sink) error {
	lr := newLineReader(r, orDefault(sess.srv.MaxMessageSize, DefaultMaxMessageSize))
	for sess.WaitRoom(ctx) {
		line, tooLong, err := lr.next()
		if tooLong {
			sess.TooLong(out, line, lr.tail)
		} else if sess.Handle(ctx, line, out) != nil {
			return nil // closed: the session is over
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}
