package socketclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// A connection's read buffer starts small (most replies are small, and
// the pool holds up to 16 connections) and is enlarged to
// largeReadBuffer, 64 KiB of payload and room for its envelope, once the
// connection has carried a longer reply. A reply that fits is parsed in
// place and only its result copied out; a longer one is gathered in a
// buffer of its own, an extra copy.
const (
	smallReadBuffer = 4 << 10
	largeReadBuffer = 68 << 10
)

// aLongTimeAgo is a deadline in the past: setting it interrupts blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// conn is one connection to the backend, used by one call at a time.
type conn struct {
	c        *net.UnixConn
	r        *bufio.Reader
	returned time.Time // when it last went back to the idle stack
	grow     bool      // a reply outgrew r's buffer: put enlarges it
	// hasDeadline says a call's deadline is set on c.
	hasDeadline bool
	// interrupt ends blocked I/O on c at once (made once, not per call).
	interrupt func()

	// firstID is the id of the first request sent on c: replies to ids
	// from it up to the current call's are stale ones (see readReply);
	// stale holds the id of one skipped in this call.
	firstID uint64
	stale   []byte

	// writeAwait's state (Linux only).
	raw      syscall.RawConn // c's descriptor; nil if unavailable
	sendStep func(fd uintptr) bool
	pending  []byte // what is left to write
	werr     error
	written  bool
}

// dial connects to the backend and checks who is behind the socket. The
// new connection counts as busy until put or discarded.
func (c *Client) dial(ctx context.Context, deadline time.Time) (*conn, error) {
	start := time.Now()
	if !c.opts.AllowAnyPeer {
		if err := checkSocketOwner(c.path); err != nil {
			return nil, fmt.Errorf("%w at %s: %w", ErrUnavailable, c.path, err)
		}
	}
	d := net.Dialer{Timeout: c.opts.DialTimeout, Deadline: deadline}
	nc, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to the backend: %w", ctx.Err())
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return nil, fmt.Errorf("connecting to the backend: %w", context.DeadlineExceeded)
		}
		c.log.Debug().Err(err).Str("socket", c.path).Dur("dur", time.Since(start)).Msg("backend dial failed")
		return nil, fmt.Errorf("%w at %s: %w", ErrUnavailable, c.path, describe(err))
	}
	uc := nc.(*net.UnixConn)
	if !c.opts.AllowAnyPeer {
		if err := checkPeer(uc); err != nil {
			uc.Close()
			return nil, fmt.Errorf("%w at %s: %w", ErrUnavailable, c.path, err)
		}
	}
	cn := &conn{c: uc, r: bufio.NewReaderSize(uc, smallReadBuffer)}
	cn.interrupt = func() { uc.SetDeadline(aLongTimeAgo) }
	cn.raw, _ = uc.SyscallConn()
	c.mu.Lock()
	closed := c.closed
	if !closed {
		c.busy[cn] = struct{}{}
	}
	c.mu.Unlock()
	if closed {
		uc.Close()
		return nil, ErrClosed
	}
	c.log.Debug().Str("socket", c.path).Dur("dur", time.Since(start)).Msg("backend dial")
	return cn, nil
}

// describe keeps the part of a network error a person can act on:
// "connect: no such file or directory" rather than the whole "dial unix
// /path: connect: …", since the caller names the socket already.
func describe(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// afterFuncer is a context that runs a function when it is cancelled
// by itself, as the bridge's call contexts do (see protocol's callCtx):
// context.AfterFunc would wrap it in a context of its own first.
type afterFuncer interface {
	AfterFunc(f func()) (stop func() bool)
}

// roundTrip sends one request line on cn and reads its reply, then pools
// cn or closes it. On failure, unsent reports that the backend certainly
// never read the whole request, so it cannot have acted on it.
//
// A request is one line; the backend acts on it only after reading its
// newline, the last byte sent. Two failures prove that did not happen:
//   - the write failed (EPIPE, ECONNRESET, ENOTCONN): the peer was gone
//     before the newline went out;
//   - the first read, before any byte of a reply, failed with ECONNRESET:
//     a Unix socket reports that when the peer closed with bytes we sent
//     still unread.
//
// A plain EOF before the reply is not "unsent": the backend may have read
// the request, acted on it and crashed before answering, and sending it
// again could do the work twice. That is ErrBadReply, whose meaning is
// "may or may not have happened". At most once is the rule; a retry is
// only ever for a request that was never received.
func (c *Client) roundTrip(ctx context.Context, deadline time.Time, cn *conn, id uint64, req []byte) (res json.RawMessage, unsent bool, err error) {
	// The connection goes back to the pool only after a complete reply,
	// success or *RPCError alike, and only if cancellation did not touch
	// its deadline.
	keep := false
	defer func() {
		if keep {
			c.put(cn)
		} else {
			c.discard(cn)
		}
	}()
	// The call's own deadline bounds the connection's I/O; a pooled
	// connection may still carry the previous call's.
	if !deadline.IsZero() || cn.hasDeadline {
		cn.c.SetDeadline(deadline)
		cn.hasDeadline = !deadline.IsZero()
	}
	// The context's end, by cancellation or by its deadline, interrupts
	// blocked I/O by moving the connection's deadline to the past.
	stop := noStop
	if af, ok := ctx.(afterFuncer); ok {
		stop = af.AfterFunc(cn.interrupt)
	} else if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, cn.interrupt)
	}

	if cn.firstID == 0 {
		cn.firstID = id
	}
	cn.stale = cn.stale[:0]
	if err := writeAwait(cn, req); err != nil {
		stop()
		unsent = peerGone(err)
		return nil, unsent, c.ioError(ctx, err, 0, unsent)
	}
	res, n, err := c.readReply(cn, id)
	// If stop reports the AfterFunc already ran, it may set a past deadline
	// at any moment, even on the next call's turn: such a connection is
	// never reused, whatever the outcome.
	stopped := stop()
	if err == nil {
		keep = stopped
		return res, false, nil
	}
	if rpcErr := (*RPCError)(nil); errors.As(err, &rpcErr) {
		keep = stopped
		return nil, false, err
	}
	unsent = n == 0 && errors.Is(err, syscall.ECONNRESET)
	if len(cn.stale) > 0 && ctx.Err() != context.Canceled && (errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil) {
		// Only an earlier request's id came before the timeout: more
		// likely a backend that gets ids wrong than a slow one.
		return nil, false, fmt.Errorf("%w: answered id %.40s, an earlier request's, and nothing to request id %d before the call timed out", ErrBadReply, cn.stale, id)
	}
	return nil, unsent, c.ioError(ctx, err, n, unsent)
}

// noStop is roundTrip's stop when the context can never end.
func noStop() bool { return true }

// peerGone reports a write error that means the peer had closed.
func peerGone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ENOTCONN)
}

// errReplyTooLarge is readLine's refusal of an over-long line.
var errReplyTooLarge = errors.New("reply too large")

// readReply reads lines until the reply to id, skipping notifications and
// stale replies to earlier requests. It returns the result, or an
// *RPCError, or another error; n counts the bytes read either way, less
// the stale replies skipped, which were no part of this call's reply. The
// result never aliases cn's buffer.
//
// A stale reply is one the backend sent after the connection went back
// to the pool, such as a duplicate: get reuses a recently pooled
// connection without looking for stray bytes (see get), so they are met
// here. Ids come from one counter per Client, so a positive integer id
// below ours, and not below the first sent on this connection, answered
// an earlier request on it. Any other id is a bad reply at once: a
// fresh connection has no stale replies, and a backend that numbers its
// replies itself must not leave calls waiting. One that answers with an
// earlier id and then nothing does wait, for the call's timeout, which
// roundTrip then reports as that bad reply.
func (c *Client) readReply(cn *conn, id uint64) (res json.RawMessage, n int, err error) {
	for {
		line, owned, m, err := readLine(cn.r, c.opts.MaxReplySize)
		n += m
		if owned && cn.r.Size() < largeReadBuffer {
			cn.grow = true
		}
		if err != nil {
			return nil, n, err
		}
		r, err := parseReply(line)
		if err != nil {
			return nil, n, fmt.Errorf("%w: %v", ErrBadReply, err)
		}
		if r.notification {
			continue // the contract has none, but they are harmless
		}
		if !idMatches(r.id, id) {
			if idBefore(r.id, id) && !idBefore(r.id, cn.firstID) {
				c.log.Debug().Str("socket", c.path).RawJSON("reply_id", r.id).Uint64("id", id).
					Msg("skipping a stale backend reply to an earlier request")
				cn.stale = append(cn.stale[:0], r.id...)
				n = 0
				continue
			}
			got := "no id"
			if r.id != nil {
				got = fmt.Sprintf("id %.40s", r.id)
			}
			if r.err != nil {
				got += " and " + r.err.Error()
			}
			return nil, n, fmt.Errorf("%w: answered %s to request id %d", ErrBadReply, got, id)
		}
		if r.err != nil {
			if !owned {
				r.err.Data = bytes.Clone(r.err.Data)
			}
			return nil, n, r.err
		}
		if !owned {
			return bytes.Clone(r.result), n, nil
		}
		return r.result, n, nil
	}
}

// readLine reads one line of at most max bytes, not counting the newline,
// which it drops. The line aliases r's buffer unless owned is set. n counts
// the bytes consumed, also on error. A longer line is refused as soon as it
// passes max, so memory stays bounded by max plus the read buffer.
func readLine(r *bufio.Reader, max int) (line []byte, owned bool, n int, err error) {
	frag, err := r.ReadSlice('\n')
	n = len(frag)
	switch {
	case err == nil && n-1 <= max:
		return frag[:n-1], false, n, nil
	case err == nil || err == bufio.ErrBufferFull && n > max:
		return nil, false, n, errReplyTooLarge
	case err != bufio.ErrBufferFull:
		return nil, false, n, err
	}
	buf := append(make([]byte, 0, 2*n), frag...)
	for {
		frag, err = r.ReadSlice('\n')
		n += len(frag)
		switch {
		case err == nil:
			if len(buf)+len(frag)-1 > max {
				return nil, false, n, errReplyTooLarge
			}
			return append(buf, frag[:len(frag)-1]...), true, n, nil
		case err != bufio.ErrBufferFull:
			return nil, false, n, err
		case len(buf)+len(frag) > max:
			return nil, false, n, errReplyTooLarge
		}
		buf = append(buf, frag...)
	}
}

// ioError classifies a failed send or receive, after n bytes of reply;
// unsent says the backend never read the request.
func (c *Client) ioError(ctx context.Context, err error, n int, unsent bool) error {
	switch {
	case errors.Is(err, ErrBadReply):
		return err
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for the backend: %w", ctx.Err())
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The call's own deadline passed (one in the past set by
		// cancellation is the case above).
		return fmt.Errorf("waiting for the backend: %w", context.DeadlineExceeded)
	case c.isClosed():
		return ErrClosed
	case errors.Is(err, errReplyTooLarge):
		return fmt.Errorf("%w: reply longer than %d bytes", ErrBadReply, c.opts.MaxReplySize)
	case unsent:
		// The backend is not taking requests; it may have refused us
		// after checking who we are.
		return fmt.Errorf("%w at %s: the backend closed the connection without reading the request: %w", ErrUnavailable, c.path, describe(err))
	case n == 0 && errors.Is(err, io.EOF):
		return fmt.Errorf("%w: connection closed before the reply", ErrBadReply)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: connection closed after %d bytes of the reply", ErrBadReply, n)
	}
	return fmt.Errorf("%w: receive: %w", ErrBadReply, describe(err))
}
