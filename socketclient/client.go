// Package socketclient is a JSON-RPC 2.0 client for a Tairseach backend on
// a Unix socket: newline-delimited messages, one request at a time per
// connection (the backend's contract), so concurrency comes from a bounded
// pool of persistent connections. It verifies that the socket and the
// process behind it belong to the current user, bounds every call by its
// context, matches each reply to its request by id, and recovers by itself
// when the backend restarts.
package socketclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero values of Options.
const (
	DefaultPoolSize     = 16
	DefaultDialTimeout  = 2 * time.Second
	DefaultMaxReplySize = 32 << 20
)

// Errors a call can fail with besides an *RPCError and a context error.
var (
	// ErrUnavailable: no connection could be made (socket missing, nobody
	// listening, or the peer check failed). The request was not sent.
	ErrUnavailable = errors.New("backend unavailable")
	// ErrBadReply: the backend's reply was garbage, had the wrong id, was
	// too large, or the connection closed before it was complete.
	ErrBadReply = errors.New("bad reply from backend")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("backend client closed")
)

// RPCError is a JSON-RPC error the backend answered with.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("backend error %d: %s", e.Code, e.Message) }

// Options configures a Client; nil or zero fields mean the defaults.
type Options struct {
	// PoolSize bounds the connections, idle and busy (default 16). A call
	// waits for a connection when all are busy.
	PoolSize int
	// DialTimeout bounds connecting (default 2 s).
	DialTimeout time.Duration
	// MaxReplySize bounds one reply line in bytes (default 32 MiB).
	MaxReplySize int
	// AllowAnyPeer skips checking that the socket file and the process
	// listening on it belong to the current user.
	AllowAnyPeer bool
	// Logger receives debug logs; nil means none.
	Logger *zerolog.Logger
}

// Client calls one backend. It is safe for concurrent use. Close it to
// release its connections.
type Client struct {
	path string
	opts Options
	log  zerolog.Logger

	nextID atomic.Uint64
	slots  chan struct{} // one token per connection in use or idle

	mu     sync.Mutex
	idle   []*conn // LIFO: the most recently used connection is warmest
	busy   map[*conn]struct{}
	closed bool
}

// conn is one connection to the backend.
type conn struct {
	c *net.UnixConn
	r *bufio.Reader
	w []byte // request buffer, reused
}

// New returns a client for the socket at path. It does not connect:
// connections are made when calls need them, so startup never waits for
// the backend.
func New(path string, opts *Options) *Client {
	c := &Client{path: path, busy: map[*conn]struct{}{}}
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

// Close closes every connection; calls in flight fail with ErrClosed and
// later calls fail at once.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	for _, cn := range c.idle {
		cn.c.Close()
	}
	c.idle = nil
	for cn := range c.busy {
		cn.c.Close()
	}
	return nil
}

// Call sends method with params (a JSON object or array, sent exactly as
// given; empty means none) and returns the result exactly as the backend
// sent it. The call is bounded by ctx: on cancellation or deadline it
// returns promptly with an error wrapping ctx.Err(), and its connection is
// closed, since a reply that arrives later must not be read by another
// call. Failures are an *RPCError, ErrUnavailable, ErrBadReply, ErrClosed
// or a context error.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a backend connection: %w", ctx.Err())
	}
	defer func() { <-c.slots }()

	id := c.nextID.Add(1)
	cn, reused, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	res, err, stale := c.roundTrip(ctx, cn, id, method, params)
	if stale && reused {
		// The idle connection was dead (the backend restarted) and the
		// request provably never reached a live backend: the write
		// failed, or the connection was found closed before anything was
		// sent. Retrying once on a new connection is safe.
		c.discard(cn)
		c.log.Debug().Str("socket", c.path).Msg("stale backend connection, redialling")
		if cn, err = c.dial(ctx); err != nil {
			return nil, err
		}
		res, err, _ = c.roundTrip(ctx, cn, id, method, params)
	}
	if err != nil {
		c.discard(cn)
		return nil, err
	}
	c.put(cn)
	return res, nil
}

// get returns an idle connection (checked to be alive) or a new one.
func (c *Client) get(ctx context.Context) (cn *conn, reused bool, err error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, false, ErrClosed
		}
		if n := len(c.idle); n > 0 {
			cn = c.idle[n-1]
			c.idle = c.idle[:n-1]
			c.busy[cn] = struct{}{}
			c.mu.Unlock()
			if alive(cn.c) {
				return cn, true, nil
			}
			c.discard(cn)
			continue
		}
		c.mu.Unlock()
		cn, err = c.dial(ctx)
		return cn, false, err
	}
}

func (c *Client) put(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.busy, cn)
	if c.closed {
		cn.c.Close()
		return
	}
	c.idle = append(c.idle, cn)
}

func (c *Client) discard(cn *conn) {
	c.mu.Lock()
	delete(c.busy, cn)
	c.mu.Unlock()
	cn.c.Close()
}

func (c *Client) dial(ctx context.Context) (*conn, error) {
	start := time.Now()
	if !c.opts.AllowAnyPeer {
		if err := checkSocketOwner(c.path); err != nil {
			return nil, fmt.Errorf("%w at %s: %v", ErrUnavailable, c.path, err)
		}
	}
	d := net.Dialer{Timeout: c.opts.DialTimeout}
	nc, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to backend: %w", ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: %v", ErrUnavailable, c.path, describeDialError(err))
	}
	uc := nc.(*net.UnixConn)
	if !c.opts.AllowAnyPeer {
		if err := checkPeer(uc); err != nil {
			uc.Close()
			return nil, fmt.Errorf("%w at %s: %v", ErrUnavailable, c.path, err)
		}
	}
	cn := &conn{c: uc, r: bufio.NewReaderSize(uc, 64<<10)}
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

// describeDialError keeps the part of a dial error a person can act on.
func describeDialError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		var se *os.SyscallError
		if errors.As(op.Err, &se) {
			return fmt.Errorf("connect: %v", se.Err)
		}
		return op.Err
	}
	return err
}

// roundTrip sends one request on cn and reads its reply. stale reports
// that the request certainly did not reach a live backend.
func (c *Client) roundTrip(ctx context.Context, cn *conn, id uint64, method string, params json.RawMessage) (res json.RawMessage, err error, stale bool) {
	if dl, ok := ctx.Deadline(); ok {
		cn.c.SetDeadline(dl)
	} else {
		cn.c.SetDeadline(time.Time{})
	}
	// Cancellation interrupts blocked I/O by moving the deadline to the past.
	stop := context.AfterFunc(ctx, func() { cn.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	cn.w = appendRequest(cn.w[:0], id, method, params)
	if _, err := cn.c.Write(cn.w); err != nil {
		return nil, c.ioError(ctx, err, "send request"), isClosedError(err)
	}
	for {
		line, err := readLine(cn.r, c.opts.MaxReplySize)
		if err != nil {
			return nil, c.ioError(ctx, err, "read reply"), false
		}
		r, err := parseReply(line)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadReply, err), false
		}
		if r.notification {
			continue // the contract has none, but they are harmless
		}
		if !idMatches(r.id, id) {
			return nil, fmt.Errorf("%w: reply id %s does not match request id %d", ErrBadReply, r.id, id), false
		}
		if r.err != nil {
			return nil, r.err, false
		}
		return r.result, nil, false
	}
}

// ioError classifies a failed read or write.
func (c *Client) ioError(ctx context.Context, err error, what string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%s: %w", what, context.DeadlineExceeded)
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if errors.Is(err, errReplyTooLarge) {
		return fmt.Errorf("%w: reply larger than %d bytes", ErrBadReply, c.opts.MaxReplySize)
	}
	return fmt.Errorf("%w: connection closed before the reply was complete (%s: %v)", ErrBadReply, what, err)
}

func isClosedError(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

var errReplyTooLarge = errors.New("reply too large")

// readLine reads one line without its newline, refusing lines over max
// bytes without buffering them.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	buf := append([]byte(nil), line...)
	for {
		line, err = r.ReadSlice('\n')
		if len(buf)+len(line) > max+1 {
			return nil, errReplyTooLarge
		}
		buf = append(buf, line...)
		if err == nil {
			return buf[:len(buf)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// appendRequest encodes a request line. params are copied as they are:
// a payload passing through is never decoded and encoded again.
func appendRequest(buf []byte, id uint64, method string, params json.RawMessage) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendUint(buf, id, 10)
	buf = append(buf, `,"method":`...)
	m, _ := json.Marshal(method) // a string always encodes
	buf = append(buf, m...)
	if p := bytes.TrimSpace(params); len(p) > 0 {
		buf = append(buf, `,"params":`...)
		if bytes.IndexByte(p, '\n') >= 0 {
			// A line-delimited protocol cannot carry a newline; JSON
			// allows them only as white space, which compacting drops.
			var b bytes.Buffer
			if json.Compact(&b, p) == nil {
				p = b.Bytes()
			}
		}
		buf = append(buf, p...)
	}
	return append(buf, "}\n"...)
}

func idMatches(got json.RawMessage, want uint64) bool {
	return string(got) == strconv.FormatUint(want, 10)
}

// reply is a parsed reply line.
type reply struct {
	id           json.RawMessage
	result       json.RawMessage
	err          *RPCError
	notification bool
}

// parseReply parses one line from the backend. Exactly one of result and
// err is set in a reply that is not a notification.
func parseReply(line []byte) (reply, error) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return reply{}, fmt.Errorf("not a JSON-RPC message: %v", err)
	}
	if m.Method != nil && len(m.ID) == 0 {
		return reply{notification: true}, nil
	}
	if m.JSONRPC != "2.0" {
		return reply{}, errors.New(`"jsonrpc" is not "2.0"`)
	}
	hasResult, hasError := m.Result != nil, m.Error != nil && string(m.Error) != "null"
	switch {
	case hasResult && hasError:
		return reply{}, errors.New("both result and error")
	case hasError:
		var e RPCError
		if err := json.Unmarshal(m.Error, &e); err != nil || e.Message == "" && e.Code == 0 {
			return reply{}, fmt.Errorf("malformed error object %.200s", m.Error)
		}
		return reply{id: m.ID, err: &e}, nil
	case hasResult:
		return reply{id: m.ID, result: m.Result}, nil
	}
	return reply{}, errors.New("neither result nor error")
}
