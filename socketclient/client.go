// Package socketclient is a JSON-RPC 2.0 client for a Tairseach backend on
// a Unix socket: newline-delimited messages, one request at a time per
// connection (the backend's contract), so concurrency comes from a bounded
// pool of persistent connections. It verifies that the socket and the
// process behind it belong to the current user, bounds every call by its
// context, matches each reply to its request by id, and recovers by itself
// when the backend restarts.
//
// A connection that saw any failure (an error, a timeout, a cancellation,
// an unexpected byte) is closed, never pooled: a reply that arrives late
// must not be read as the answer to the next call.
package socketclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero values of Options.
const (
	DefaultPoolSize     = 16
	DefaultDialTimeout  = 2 * time.Second
	DefaultMaxReplySize = 32 << 20
)

// Options configures a Client; nil or zero fields mean the defaults.
type Options struct {
	// PoolSize bounds the connections, idle and busy (default 16). A call
	// waits for a connection when all are busy.
	PoolSize int
	// DialTimeout bounds connecting (default 2 s).
	DialTimeout time.Duration
	// MaxReplySize bounds one reply line in bytes (default 32 MiB). A
	// longer reply fails the call with ErrBadReply without being buffered.
	MaxReplySize int
	// AllowAnyPeer skips checking that the socket file and the process
	// listening on it belong to the current user. Only for tests of
	// sockets that belong to someone else.
	AllowAnyPeer bool
	// Logger receives debug logs (dials and failures; sizes, never
	// contents, at trace level); nil means none.
	Logger *zerolog.Logger
}

// Client calls one backend. It is safe for concurrent use. The Client owns
// its connections and closes them; Close releases them all.
type Client struct {
	path string
	opts Options
	log  zerolog.Logger

	nextID atomic.Uint64
	// slots holds a token per call that has or is getting a connection.
	// A connection is dialled only when no idle one is left, and a call
	// returns its connection to the idle stack before its token, so
	// connections (idle and busy) never outnumber PoolSize.
	slots chan struct{}
	done  chan struct{} // closed by Close: wakes calls waiting for a slot

	mu     sync.Mutex
	idle   []*conn            // LIFO: the most recently used connection is warmest
	busy   map[*conn]struct{} // in use; Close closes them to fail their calls
	closed bool
}

// New returns a client for the socket at path. It does not connect:
// connections are made when calls need them, so startup never waits for
// the backend.
func New(path string, opts *Options) *Client {
	c := &Client{path: path, busy: map[*conn]struct{}{}, done: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.PoolSize <= 0 {
		c.opts.PoolSize = DefaultPoolSize
	}
	if c.opts.DialTimeout <= 0 {
		c.opts.DialTimeout = DefaultDialTimeout
	}
	if c.opts.MaxReplySize <= 0 {
		c.opts.MaxReplySize = DefaultMaxReplySize
	}
	if c.opts.Logger != nil {
		c.log = *c.opts.Logger
	} else {
		c.log = zerolog.Nop()
	}
	c.slots = make(chan struct{}, c.opts.PoolSize)
	return c
}

// Path returns the socket path.
func (c *Client) Path() string { return c.path }

// Close closes every connection: calls in flight and calls waiting for a
// connection fail with ErrClosed, and so do later calls. It does not wait
// for those calls to return. Closing twice is harmless.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	conns := c.idle
	c.idle = nil
	for cn := range c.busy {
		conns = append(conns, cn)
	}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.c.Close()
	}
	return nil
}

// Call sends method with params and returns the result exactly as the
// backend sent it. params go out byte for byte (compacted only if they
// hold a newline, which would split the line); empty params are left out.
//
// The call is bounded by ctx: on cancellation or deadline it returns
// promptly with an error wrapping ctx.Err(). Failures are an *RPCError (the
// backend's answer), or wrap ErrUnavailable, ErrBadReply, ErrClosed or the
// context's error.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.CallWithin(ctx, 0, method, params)
}

// CallWithin is Call bounded also by timeout, counted from now (0 means
// none): running out fails the call like its context's deadline would,
// with an error wrapping context.DeadlineExceeded. It spares the caller a
// context with a timer per call: the bound is the deadline of the dial and
// of the connection's I/O, and a timer only while waiting for a free
// connection.
func (c *Client) CallWithin(ctx context.Context, timeout time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	start := time.Now()
	var deadline time.Time
	if timeout > 0 {
		deadline = start.Add(timeout)
	}
	id := c.nextID.Add(1)
	res, err := c.call(ctx, deadline, id, method, params)
	if err != nil {
		c.log.Debug().Err(err).Str("socket", c.path).Str("method", method).Uint64("id", id).
			Dur("dur", time.Since(start)).Msg("backend call failed")
		return nil, err
	}
	c.log.Trace().Str("method", method).Uint64("id", id).Int("params_bytes", len(params)).
		Int("result_bytes", len(res)).Dur("dur", time.Since(start)).Msg("backend call")
	return res, nil
}

// reqBufs recycles request lines between calls.
var reqBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func (c *Client) call(ctx context.Context, deadline time.Time, id uint64, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("backend call: %w", err)
	}
	if err := c.takeSlot(ctx, deadline); err != nil {
		return nil, err
	}
	defer func() { <-c.slots }()

	bp := reqBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 { // do not keep a huge request alive
			reqBufs.Put(bp)
		}
	}()
	req, err := appendRequest((*bp)[:0], id, method, params)
	*bp = req
	if err != nil {
		return nil, err
	}

	cn, pooled, err := c.get(ctx, deadline)
	if err != nil {
		return nil, err
	}
	res, unsent, err := c.roundTrip(ctx, deadline, cn, id, req)
	if err != nil && unsent && pooled {
		// The idle connection was dead (the backend restarted or dropped
		// it) and the backend provably never read the request (see
		// roundTrip), so sending it again cannot run it twice. Once, and
		// only for a pooled connection: a new connection failing the
		// same way is the backend failing now.
		c.log.Debug().Err(err).Str("socket", c.path).Msg("stale backend connection, redialling")
		if cn, err = c.dial(ctx, deadline); err != nil {
			return nil, err
		}
		res, _, err = c.roundTrip(ctx, deadline, cn, id, req)
	}
	return res, err
}

// takeSlot waits for a call's turn at a connection, at most until
// deadline (none when zero).
func (c *Client) takeSlot(ctx context.Context, deadline time.Time) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	default:
	}
	var expired <-chan time.Time
	if !deadline.IsZero() {
		// Under load most calls wait here, so the timers are reused.
		t := slotTimers.Get().(*time.Timer)
		t.Reset(time.Until(deadline))
		defer func() {
			t.Stop() // since Go 1.23 this leaves no stale tick in t.C
			slotTimers.Put(t)
		}()
		expired = t.C
	}
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for a free backend connection: %w", ctx.Err())
	case <-expired:
		return fmt.Errorf("waiting for a free backend connection: %w", context.DeadlineExceeded)
	case <-c.done:
		return ErrClosed
	}
}

// slotTimers are stopped timers for takeSlot.
var slotTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// get returns an idle connection (checked to be still open) or a new one;
// pooled says which.
func (c *Client) get(ctx context.Context, deadline time.Time) (cn *conn, pooled bool, err error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, false, ErrClosed
		}
		n := len(c.idle)
		if n == 0 {
			c.mu.Unlock()
			break
		}
		cn = c.idle[n-1]
		c.idle[n-1] = nil
		c.idle = c.idle[:n-1]
		c.busy[cn] = struct{}{}
		c.mu.Unlock()
		// A connection back from a call moments ago is used as it is: if
		// the backend has closed it since, the write fails with EPIPE
		// before the backend could read anything, and call redials. The
		// check costs a system call, a tenth of a busy bridge's CPU. A
		// stray reply the backend sent since is skipped by its id (see
		// readReply).
		if time.Since(cn.returned) < peekAfter || alive(cn.c) {
			return cn, true, nil
		}
		c.log.Debug().Str("socket", c.path).Msg("idle backend connection closed by the backend")
		c.discard(cn)
	}
	cn, err = c.dial(ctx, deadline)
	return cn, false, err
}

// peekAfter is how long a connection may sit idle before get checks it
// with alive. A shorter idle connection is used unchecked (see get).
const peekAfter = 100 * time.Millisecond

// put returns a healthy connection to the idle stack.
func (c *Client) put(cn *conn) {
	if cn.r.Buffered() > 0 {
		// The backend sent more than the reply; what it means is unknown.
		c.discard(cn)
		return
	}
	if cn.grow {
		// Nothing is buffered (checked above), so nothing is lost.
		cn.r, cn.grow = bufio.NewReaderSize(cn.c, largeReadBuffer), false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.busy, cn)
	if c.closed {
		cn.c.Close()
		return
	}
	cn.returned = time.Now()
	c.idle = append(c.idle, cn)
}

// discard closes a connection that must not be used again.
func (c *Client) discard(cn *conn) {
	c.mu.Lock()
	delete(c.busy, cn)
	c.mu.Unlock()
	cn.c.Close()
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
