package socketclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// readBufferSize is a connection's read buffer: most replies arrive in
// one read.
const readBufferSize = 64 << 10

// aLongTimeAgo is a deadline in the past: setting it interrupts blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// errReplyTooLarge is readLine's refusal of an over-long line.
var errReplyTooLarge = errors.New("reply too large")

// conn is one connection to the backend, used by one call at a time. An
// idle one never has a deadline: only a call's end sets one, and such a
// connection is closed.
type conn struct {
	c *net.UnixConn
	r *bufio.Reader
}

// dial connects to the backend and checks who is behind the socket. The
// new connection counts as busy until released.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	start := time.Now()
	if !c.opts.AllowAnyPeer {
		if err := checkSocketOwner(c.path); err != nil {
			return nil, fmt.Errorf("%w at %s: %w", ErrUnavailable, c.path, err)
		}
	}
	uc, err := c.connect(ctx)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("connecting to the backend: %w", ctx.Err())
		case errors.Is(err, context.DeadlineExceeded):
			// ctx's deadline, which the dialer saw pass before ctx did.
			return nil, fmt.Errorf("connecting to the backend: %w", context.DeadlineExceeded)
		case queueFull(err):
			return nil, fmt.Errorf("%w at %s: it accepted no connection within %s; its queue of connections waiting to be accepted stayed full",
				ErrBusy, c.path, c.opts.DialTimeout)
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrUnavailable, c.path, dialProblem(c.path, err))
	}
	if !c.opts.AllowAnyPeer {
		if err := checkPeer(uc); err != nil {
			uc.Close()
			return nil, fmt.Errorf("%w at %s: %w", ErrUnavailable, c.path, err)
		}
	}
	cn := &conn{c: uc, r: bufio.NewReaderSize(uc, readBufferSize)}
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

// Pauses between attempts to connect to a backend whose queue of
// connections waiting to be accepted is full.
const (
	firstRetryPause = time.Millisecond
	maxRetryPause   = 50 * time.Millisecond
)

// connect connects to the socket. A backend whose queue of connections
// waiting to be accepted is full refuses at once (Linux says EAGAIN): it
// is busy, not down, and a burst of calls meets exactly that. So
// connecting is tried again, after pauses that grow and are drawn at
// random so that a burst does not retry in step, until the dial timeout,
// which then returns the refusal. Connecting to a Unix socket otherwise
// never waits.
func (c *Client) connect(ctx context.Context) (*net.UnixConn, error) {
	var d net.Dialer
	giveUp := time.Now().Add(c.opts.DialTimeout)
	pause := firstRetryPause
	for {
		nc, err := d.DialContext(ctx, "unix", c.path)
		if err == nil {
			return nc.(*net.UnixConn), nil
		}
		wait := min(pause/2+rand.N(pause/2+1), time.Until(giveUp))
		if !queueFull(err) || wait <= 0 {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		pause = min(2*pause, maxRetryPause)
	}
}

// dialProblem explains a failed dial: a path that holds no socket says
// so, as a *SocketPathError, rather than "connection refused".
func dialProblem(path string, err error) error {
	fi, serr := os.Stat(path)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return &SocketPathError{}
	case serr == nil && fi.Mode()&fs.ModeSocket == 0:
		return &SocketPathError{Kind: fileKind(fi.Mode())}
	}
	return describe(err)
}

// fileKind names what a file that is not a socket is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// describe keeps the part of a network error a person can act on:
// "connect: connection refused" rather than the whole "dial unix /path:
// connect: …", since the caller names the socket already.
func describe(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// usable reports whether an idle connection can carry a request: the
// backend has not closed it, and has sent nothing since the last reply
// but white space, which is skipped. It never blocks.
func (cn *conn) usable() bool {
	for {
		if cn.r.Buffered() == 0 {
			if open, pending := peek(cn.c); !open || !pending {
				return open
			}
		}
		// A byte is buffered or waiting in the socket: this does not block.
		b, err := cn.r.ReadByte()
		if err != nil || strings.IndexByte(" \t\r\n", b) < 0 {
			return false
		}
	}
}

// roundTrip sends one request line on cn and reads the reply to id, then
// pools cn or closes it. On failure, unsent reports that no byte of the
// request reached the socket, so the backend cannot have acted on it.
func (c *Client) roundTrip(ctx context.Context, cn *conn, id uint64, req net.Buffers, call Call) (res jsontext.Value, unsent bool, err error) {
	// The connection goes back to the pool only after a complete reply,
	// a result or an *RPCError, and only if the context's end did not
	// touch its deadline.
	keep := false
	defer func() { c.release(cn, keep) }()
	// The context's end, by cancellation or by its deadline, interrupts
	// blocked I/O by moving the connection's deadline to the past.
	stop := context.AfterFunc(ctx, func() { cn.c.SetDeadline(aLongTimeAgo) })
	size := 0
	for _, b := range req {
		size += len(b)
	}
	bufs := slices.Clone(req) // WriteTo consumes its buffers; req may be sent again
	n, err := bufs.WriteTo(cn.c)
	if err != nil {
		stop()
		switch {
		case ctx.Err() != nil:
			return nil, false, fmt.Errorf("sending to the backend: %w", ctx.Err())
		case c.isClosed():
			return nil, false, ErrClosed
		case n == 0:
			return nil, true, fmt.Errorf("%w at %s: the backend closed the connection before the request was sent: %w", ErrUnavailable, c.path, describe(err))
		}
		return nil, false, fmt.Errorf("%w: connection lost after %d of the request's %d bytes were sent: %w", ErrBadReply, n, size, describe(err))
	}
	res, err = c.readReply(ctx, cn, id, call)
	// If stop reports the AfterFunc already ran, it may set a past deadline
	// at any moment, even on the next call's turn: such a connection is
	// never reused, whatever the outcome.
	stopped := stop()
	var rpcErr *RPCError
	if err == nil || errors.As(err, &rpcErr) {
		keep = stopped
		return res, false, err
	}
	return nil, false, c.receiveError(ctx, err)
}

// readReply reads lines until the reply to id, counting each with call's
// Grow as it is read. What comes before the reply belongs to the call:
// notifications go to call.Notify, requests to call.Request (see
// exchange). Blank lines are skipped. It returns the result or an
// *RPCError, or another error.
func (c *Client) readReply(ctx context.Context, cn *conn, id uint64, call Call) (jsontext.Value, error) {
	counted := 0
	grow := func(n int) error {
		if call == nil {
			return nil
		}
		if err := call.Grow(ctx, n); err != nil {
			return err
		}
		counted += n
		return nil
	}
	x := newExchange(ctx, cn, call)
	defer x.finish()
	for {
		before := counted
		line, err := readLine(cn.r, c.opts.MaxReplySize, grow)
		if err != nil {
			return nil, err
		}
		held := counted - before // the line's bytes, which a reply keeps
		if len(bytes.Trim(line, " \t\r")) == 0 {
			x.shrink(held)
			continue
		}
		r, result, err := decodeReply(line)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadReply, err)
		}
		switch {
		case r.notification():
			x.notify(r.method(), r.Params)
			x.shrink(held)
			continue
		case r.request():
			x.answer(r.ID, r.method(), r.Params, held)
			continue
		}
		if string(r.ID) != strconv.FormatUint(id, 10) {
			got := "no id"
			if r.ID != nil {
				got = fmt.Sprintf("id %.40s", r.ID)
			}
			return nil, fmt.Errorf("%w: answered %s to request id %d", ErrBadReply, got, id)
		}
		if e := r.Error; e != nil {
			return nil, &RPCError{Code: *e.Code, Message: e.Message, Data: e.Data}
		}
		return result, nil
	}
}

// exchange is what a call has going on with the backend, on its
// connection, while it awaits the reply: the requests of the backend's
// own, each answered by call.Request on a goroutine of its own, its answer
// written on the connection unless the reply came first.
type exchange struct {
	cn      *conn
	call    Call            // nil: requests are answered -32601
	parent  context.Context // the call's
	answers sync.WaitGroup  // the goroutines answering requests; finish waits for them
	pending atomic.Int32    // requests being answered

	mu   sync.Mutex // guards what follows, and writes on cn
	done bool       // the reply came or the call ended: nothing more is written
	// ctx bounds the answers to the backend's requests, and stop ends
	// it; made with the first request, as most calls have none.
	ctx  context.Context
	stop context.CancelFunc
}

func newExchange(ctx context.Context, cn *conn, call Call) *exchange {
	return &exchange{cn: cn, call: call, parent: ctx}
}

// requestContext returns the context that bounds the answers to the
// backend's requests: the call's, ended by finish.
func (x *exchange) requestContext() context.Context {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ctx == nil {
		x.ctx, x.stop = context.WithCancel(x.parent)
		if x.done {
			x.stop()
		}
	}
	return x.ctx
}

// finish ends the exchange once the reply came, or the read failed: no
// answer is written after it, so the connection carries nothing more of
// this call, and the requests still waiting are withdrawn.
func (x *exchange) finish() {
	x.mu.Lock()
	x.done = true
	stop := x.stop
	x.mu.Unlock()
	if stop != nil {
		stop()
	}
	x.answers.Wait()
}

func (x *exchange) shrink(n int) {
	if x.call != nil && n > 0 {
		x.call.Shrink(n)
	}
}

func (x *exchange) notify(method string, params jsontext.Value) {
	if x.call != nil {
		x.call.Notify(method, params)
	}
}

// answer answers the backend's request id, whose line holds held counted
// bytes, on a goroutine of its own: the reply may come before it is
// answered, and the backend may send more meanwhile.
func (x *exchange) answer(id jsontext.Value, method string, params jsontext.Value, held int) {
	switch {
	case x.call == nil:
		x.write(responseLine(id, nil, &RPCError{Code: -32601, Message: "the client takes no requests in this call: " + method}))
		return
	case x.pending.Add(1) > MaxPendingRequests:
		x.pending.Add(-1)
		x.shrink(held)
		x.write(responseLine(id, nil, &RPCError{Code: -32001, Message: fmt.Sprintf("too many requests waiting for their answers in this call (%d); answer after the others are answered", MaxPendingRequests)}))
		return
	}
	x.answers.Add(1)
	ctx := x.requestContext()
	// Ends when call.Request returns, which ctx bounds.
	go func() {
		defer x.answers.Done()
		defer x.pending.Add(-1)
		res, err := x.call.Request(ctx, id, method, params)
		line := responseLine(id, res, err)
		x.shrink(held)
		x.write(line)
	}()
}

// write writes an answer to the backend, unless the exchange is over. A
// failed write is not reported here: the connection is then broken, and
// the read of the reply fails.
func (x *exchange) write(line []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.done {
		x.cn.c.Write(line)
	}
}

// readLine reads one line without its newline. A line longer than max
// bytes, not counting a final "\r", is refused as soon as that is clear,
// so memory stays bounded by max plus the read buffer. Before it holds
// more of the line, grow counts the bytes; its error ends the read. A line
// the connection's end cuts short is io.ErrUnexpectedEOF.
//
// A long line is gathered in pieces, then copied once into a slice of its
// exact size: growing one slice instead would leave garbage and unused
// room of up to twice the line.
func readLine(r *bufio.Reader, max int, grow func(n int) error) ([]byte, error) {
	var pieces [][]byte
	size := 0
	for {
		frag, err := r.ReadSlice('\n')
		if size+len(frag) > max+2 { // room for "\r\n"
			return nil, errReplyTooLarge
		}
		if gerr := grow(len(frag)); gerr != nil {
			return nil, gerr
		}
		size += len(frag)
		switch {
		case err == bufio.ErrBufferFull:
			pieces = append(pieces, bytes.Clone(frag))
			continue
		case err == io.EOF && size > 0:
			return nil, io.ErrUnexpectedEOF
		case err != nil:
			return nil, err
		}
		line := make([]byte, 0, size-1)
		for _, p := range pieces {
			line = append(line, p...)
		}
		line = append(line, frag[:len(frag)-1]...)
		if len(bytes.TrimSuffix(line, []byte{'\r'})) > max {
			return nil, errReplyTooLarge
		}
		return line, nil
	}
}

// receiveError classifies a failure to read a valid reply.
func (c *Client) receiveError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrBadReply):
		return err
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for the backend: %w", ctx.Err())
	case c.isClosed():
		return ErrClosed
	case errors.Is(err, errReplyTooLarge):
		return fmt.Errorf("%w: reply longer than %d bytes", ErrBadReply, c.opts.MaxReplySize)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: connection closed before the reply", ErrBadReply)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: connection closed mid-reply", ErrBadReply)
	}
	return fmt.Errorf("%w: receive: %w", ErrBadReply, describe(err))
}
