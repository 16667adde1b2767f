package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/socketclient"
)

// maxLine bounds one request line (a batch is one line).
const maxLine = 16 << 20

// server serves newline-delimited JSON-RPC on a Unix socket: each
// connection's requests are answered one after the other, in order;
// connections are served concurrently. Only peers with the server's UID
// are served (where the OS can tell).
type server struct {
	path string
	ln   *net.UnixListener
	d    *dispatcher
	log  zerolog.Logger
	uid  int // the UID peers must have

	mu      sync.Mutex
	closing bool                       // set once serve starts shutting down
	conns   map[*net.UnixConn]struct{} // open connections
	wg      sync.WaitGroup             // one per connection goroutine
}

// listen creates the socket at path, mode 0600, replacing a stale socket
// file that nobody listens on. The server accepts nothing until serve.
func listen(path string, d *dispatcher, log zerolog.Logger) (*server, error) {
	if err := removeStale(path, log); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Between bind and chmod the socket has the umask's mode; the peer
	// UID check covers that window.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("restrict socket %s: %w", path, err)
	}
	return &server{
		path:  path,
		ln:    ln,
		d:     d,
		log:   log,
		uid:   os.Getuid(),
		conns: make(map[*net.UnixConn]struct{}),
	}, nil
}

// removeStale removes a socket file at path that refuses connections. A
// socket something answers on, or a file that is not a socket, is left
// alone and reported as an error.
func removeStale(path string, log zerolog.Logger) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket; not replacing it", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("another backend is listening on %s", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	log.Info().Str("socket", path).Msg("removed stale socket")
	return nil
}

// serve accepts connections until ctx is done. Then it stops accepting,
// cancels the context handlers run under, lets requests in flight
// finish and write their responses for up to grace, closes every
// connection and the listener (which removes the socket file), and
// returns, waiting at most a second more for handlers that ignore their
// context. It returns early with an error if accepting fails.
func (s *server) serve(ctx context.Context, grace time.Duration) error {
	// Handlers run under ctx; cancelling it at shutdown interrupts the
	// ones that wait (debug.sleep), also when accepting failed.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	acceptErr := make(chan error, 1)
	// The accept loop is owned by serve; it ends when the listener is
	// closed below, and serve waits for it.
	go func() { acceptErr <- s.acceptLoop(ctx) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-acceptErr:
	}

	cancel()
	s.mu.Lock()
	s.closing = true
	for c := range s.conns {
		// Wakes connections waiting for a request; one that is handling
		// a request finds the deadline passed when it reads next.
		c.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	s.ln.Close()
	if err == nil {
		<-acceptErr
	}

	done := make(chan struct{})
	// Owned by serve; ends when every connection goroutine has.
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.mu.Lock()
		s.log.Warn().Int("connections", len(s.conns)).Dur("grace", grace).Msg("closing connections with requests in flight")
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		// A handler that ignores its context cannot be stopped; the
		// process exits without it rather than hang.
		select {
		case <-done:
		case <-time.After(time.Second):
			s.log.Warn().Msg("requests still running after the grace period; not waiting for them")
		}
	}
	return err
}

// acceptLoop accepts connections until the listener is closed, serving
// each in a goroutine that serve waits for through s.wg.
func (s *server) acceptLoop(ctx context.Context) error {
	var delay time.Duration
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				// Out of file descriptors and the like: back off, as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn().Err(err).Dur("retry_in", delay).Msg("accept")
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("accept on %s: %w", s.path, err)
		}
		delay = 0
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		// Owned by serve through s.wg; ends when the peer hangs up, the
		// server shuts down, or a write fails.
		go s.serveConn(ctx, c)
	}
}

// serveConn answers the requests on one connection in order.
func (s *server) serveConn(ctx context.Context, c *net.UnixConn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()

	// Where the OS cannot tell the peer's uid, the socket's 0600 mode is
	// the only guard.
	if uid, err := socketclient.PeerUID(c); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		s.log.Warn().Err(err).Msg("rejected peer: cannot read its credentials")
		return
	} else if err == nil && uid != s.uid {
		s.log.Warn().Int("peer_uid", uid).Int("uid", s.uid).Msg("rejected peer with another uid")
		return
	}

	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		if s.isClosing() {
			return // the request was not started: nothing is in flight
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		// The handler may speak on the connection until it answers.
		if resp := s.d.handleLine(withPeer(ctx, &peer{conn: c, sc: sc}), sc.Bytes()); resp != nil {
			if err := s.write(c, resp); err != nil {
				s.log.Debug().Err(err).Msg("write response")
				return
			}
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		// The rest of the line cannot be skipped reliably: answer and hang up.
		s.write(c, errorResponse(nullID, &rpcError{Code: codeParseError, Message: fmt.Sprintf("parse error: request line longer than %d bytes", maxLine)}))
	}
}

// write sends one response (or batch) as one line.
func (s *server) write(c net.Conn, resp any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // strings and ids go back as sent
	if err := enc.Encode(resp); err != nil {
		s.log.Error().Err(err).Msg("encode response")
		buf.Reset()
		enc.Encode(errorResponse(nullID, &rpcError{Code: codeInternalError, Message: "internal error: cannot encode the result"}))
	}
	_, err := c.Write(buf.Bytes())
	return err
}

func (s *server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}
