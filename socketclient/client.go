// Package socketclient is a JSON-RPC 2.0 client for a Tairseach backend on
// a Unix socket: newline-delimited messages, one request at a time per
// connection (the backend's contract), so concurrency comes from a bounded
// pool of persistent connections. It verifies that the socket and the
// process behind it belong to the current user, bounds every call by its
// context, matches each reply to its request by id, and recovers by itself
// when the backend restarts.
//
// A request is sent at most once. It is sent again, on another connection,
// only when it provably never reached the backend; any other failure
// after it went out is ErrBadReply, meaning it may or may not have been
// carried out. A connection that saw any failure is closed, never pooled,
// and an idle one is checked before it is used again.
package socketclient

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"
)

// Defaults for the zero values of Options.
const (
	DefaultPoolSize     = 16
	DefaultDialTimeout  = 2 * time.Second
	DefaultMaxReplySize = 32 << 20

	// MaxPendingRequests bounds the backend's requests of one call
	// waiting for their answers at once.
	MaxPendingRequests = 32
)

// Options configures a Client; nil or zero fields mean the defaults.
type Options struct {
	// PoolSize bounds the connections, idle and busy (default 16). A call
	// waits for a connection when all are busy.
	PoolSize int
	// DialTimeout bounds connecting (default 2 s), including the
	// attempts made again while the backend's queue of connections
	// waiting to be accepted is full.
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
	// slots holds a token per call that has or is getting a connection,
	// so connections, idle and busy, never outnumber PoolSize.
	slots chan struct{}
	done  chan struct{} // closed by Close: wakes calls waiting for a slot

	// mu guards what follows. It is the only lock here, and no I/O and
	// no other lock is taken while it is held.
	mu     sync.Mutex
	idle   []*conn            // LIFO: the most recently used connection first
	busy   map[*conn]struct{} // in use; Close closes them to fail their calls
	closed bool
}

// New returns a client for the socket at path. It does not connect:
// connections are made when calls need them, so startup never waits for
// the backend.
func New(path string, opts *Options) *Client {
	c := &Client{path: path, busy: map[*conn]struct{}{}, done: make(chan struct{}), log: zerolog.Nop()}
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

// Call sends method with params and returns the backend's result. params
// must be valid JSON; they go out as they are (compacted if they hold a
// line break), and empty params are left out. The result is the backend's
// bytes, except that a result holding invalid UTF-8 is compacted with
// each invalid byte replaced by U+FFFD, so that it can be passed on as
// JSON text; so is an error's data.
//
// Everything the backend sends on the connection before its reply belongs
// to the call, and goes to call: notifications to Notify, and requests to
// Request, each on a goroutine of its own while the reply is awaited, the
// answer written on the same connection (at most MaxPendingRequests at
// once; more are answered -32001 at once). Once the reply comes, requests
// still waiting are withdrawn and their answers never written. Each line
// is counted, as it is read, with call's Grow, which may make the read
// wait. A nil call counts nothing, and answers every request of the
// backend's -32601.
//
// The call is bounded by ctx: on cancellation or deadline it returns
// promptly with an error wrapping ctx.Err(). Failures are an *RPCError (the
// backend's answer), or wrap ErrUnavailable, ErrBusy, ErrBadReply,
// ErrClosed or the context's error.
func (c *Client) Call(ctx context.Context, method string, params jsontext.Value, call Call) (res jsontext.Value, err error) {
	start := time.Now()
	id := c.nextID.Add(1)
	defer func() {
		if err != nil {
			c.log.Debug().Err(err).Str("socket", c.path).Str("method", method).Uint64("id", id).
				Dur("dur", time.Since(start)).Msg("backend call failed")
			return
		}
		c.log.Trace().Str("method", method).Uint64("id", id).Int("params_bytes", len(params)).
			Int("result_bytes", len(res)).Dur("dur", time.Since(start)).Msg("backend call")
	}()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("backend call: %w", err)
	}
	if err := c.takeSlot(ctx); err != nil {
		return nil, err
	}
	defer func() { <-c.slots }()
	// Made once a connection is at hand: a call that waits for one holds
	// no copy of its params.
	req, err := requestLine(id, method, params)
	if err != nil {
		return nil, err
	}
	for {
		cn, pooled, err := c.get(ctx)
		if err != nil {
			return nil, err
		}
		res, unsent, err := c.roundTrip(ctx, cn, id, req, call)
		if unsent && pooled {
			// The backend dropped the idle connection after it was
			// checked, and no byte of the request went out: sending it
			// on another connection cannot run it twice. A new
			// connection failing so is the backend failing now.
			c.log.Debug().Err(err).Str("socket", c.path).Msg("stale backend connection, sending again")
			continue
		}
		return res, err
	}
}

// Check connects to the backend, checking who is behind the socket, and
// keeps the connection for the next call. It reports why the backend
// cannot be reached, wrapping ErrUnavailable or ErrBusy.
func (c *Client) Check(ctx context.Context) error {
	if err := c.takeSlot(ctx); err != nil {
		return err
	}
	defer func() { <-c.slots }()
	cn, _, err := c.get(ctx)
	if err != nil {
		return err
	}
	c.release(cn, true)
	return nil
}

// takeSlot waits for one of the PoolSize slots; the caller gives it back.
func (c *Client) takeSlot(ctx context.Context) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for a free backend connection: %w", ctx.Err())
	case <-c.done:
		return ErrClosed
	}
}

// get returns an idle connection that is still usable, or a new one;
// pooled says which.
func (c *Client) get(ctx context.Context) (cn *conn, pooled bool, err error) {
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
		if cn.usable() {
			return cn, true, nil
		}
		c.log.Debug().Str("socket", c.path).Msg("idle backend connection closed or not quiet")
		c.release(cn, false)
	}
	cn, err = c.dial(ctx)
	return cn, false, err
}

// release ends a call's use of cn: back to the idle stack if keep is
// set and the Client is open, else closed.
func (c *Client) release(cn *conn, keep bool) {
	c.mu.Lock()
	delete(c.busy, cn)
	keep = keep && !c.closed
	if keep {
		c.idle = append(c.idle, cn)
	}
	c.mu.Unlock()
	if !keep {
		cn.c.Close()
	}
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Call is the request on whose behalf the Client calls the backend: what
// the Client needs of it. Its methods are called from the goroutines of
// one Client.Call, several at once.
type Call interface {
	// Grow counts n more bytes held for the request (each line from the
	// backend, as it is read), waiting while there is no room for them;
	// it fails only when ctx ends first.
	Grow(ctx context.Context, n int) error
	// Shrink gives back n of the bytes Grow counted, no longer held: a
	// line from the backend once it is handled.
	Shrink(n int)
	// Notify handles a notification the backend sent before its reply,
	// such as progress. It must not block, nor keep params.
	Notify(method string, params jsontext.Value)
	// Request answers a request the backend sent before its reply: with
	// the result, or an error (an *RPCError is sent as it is, any other
	// as -32603). It may wait, for a person, say, until ctx ends: ctx
	// ends when the backend's reply comes or the call ends. It must not
	// keep params.
	Request(ctx context.Context, id jsontext.Value, method string, params jsontext.Value) (jsontext.Value, error)
}
