package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/console"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// serveHTTP serves srv over Streamable HTTP as opts.http says until ctx
// ends (a signal), then shuts down within the grace period: new requests
// get 503, calls in flight are answered, streams close. hard ends the
// grace period early (a second signal).
func serveHTTP(ctx, hard context.Context, e *env, opts *options, lg *zerolog.Logger, srv *protocol.Server, reg *registry.Registry, backend *socketclient.Client, named *namedClients, con *console.Console) error {
	ho := &opts.http
	ep, err := ho.endpoint()
	if err != nil {
		return usageError{err}
	}
	tls := ho.tlsCert != "" // resolve refused an address off loopback without a token, and without TLS unless asked
	ln, err := listen(ep)
	if err != nil {
		return err
	}
	hopts := ho.handlerOptions()
	hopts.Health, hopts.Logger = healthReport(reg, backend), lg
	if named != nil {
		hopts.Guard.Clients = named.lookup
	}
	h := mcphttp.NewHandler(srv, hopts)
	if named != nil {
		named.handler.Store(h)
	}
	hs := ho.server(withConsole(h, con), lg)
	h.CountConnections(hs) // --max-connections
	url, access := describe(ep, ln, tls, ho, named)
	con.SetBase(strings.TrimSuffix(url[strings.LastIndex(url, " ")+1:], mcphttp.Path)) // unix:PATH http://localhost/mcp: the latter
	removeRun := announceConsole(e, lg, con, "http")
	defer removeRun()
	fmt.Fprintf(e.stderr, "serving MCP on %s (%s)\n", url, access)
	lg.Info().Str("url", url).Str("access", access).Msg("serving over HTTP")

	served := make(chan error, 1)
	go func() { // ends when hs is shut down
		if tls {
			served <- hs.ServeTLS(ln, ho.tlsCert, ho.tlsKey)
		} else {
			served <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	lg.Info().Msg("shutting down: answering the calls in flight")
	con.Close() // its event streams end, its questions are refused
	grace, cancel := context.WithTimeout(hard, protocol.DefaultShutdownGrace)
	defer cancel()
	if err := h.Shutdown(grace); err != nil {
		lg.Warn().Msg("shutdown grace period over, cancelled the calls in flight")
	}
	if err := hs.Shutdown(grace); err != nil {
		hs.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if ep.network == "unix" {
		os.Remove(ep.address)
	}
	return nil
}

// listen opens the listener: a TCP address, or a Unix socket created 0600
// whose clients must run as the same user.
func listen(ep endpoint) (net.Listener, error) {
	if ep.network == "tcp" {
		ln, err := net.Listen("tcp", ep.address)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", ep.address, err)
		}
		return ln, nil
	}
	if fi, err := os.Lstat(ep.address); err == nil && fi.Mode()&os.ModeSocket != 0 {
		// A socket left behind by a bridge that did not exit cleanly; one
		// still serving would answer.
		if c, err := net.Dial("unix", ep.address); err == nil {
			c.Close()
			return nil, fmt.Errorf("listen on %s: another server answers there", ep.address)
		}
		os.Remove(ep.address)
	}
	// The socket is made private from the start: no moment where another
	// user could connect.
	old := syscall.Umask(0o077)
	ln, err := net.Listen("unix", ep.address)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", ep.address, err)
	}
	if err := os.Chmod(ep.address, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return peerChecked{ln.(*net.UnixListener)}, nil
}

// peerChecked accepts only connections from processes of the current user.
type peerChecked struct{ *net.UnixListener }

func (l peerChecked) Accept() (net.Conn, error) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := socketclient.PeerUID(c)
		if err == nil && uid != os.Getuid() || err != nil && !errors.Is(err, errors.ErrUnsupported) {
			c.Close() // another user's process, or one the kernel cannot name
			continue
		}
		return c, nil
	}
}

// describe says where the bridge serves and who may use it, for the line
// printed at start.
func describe(ep endpoint, ln net.Listener, tls bool, ho *httpOptions, named *namedClients) (url, access string) {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	var parts []string
	if ep.network == "unix" {
		url = "unix:" + ep.address + " " + scheme + "://localhost" + mcphttp.Path
		parts = append(parts, "this user only")
	} else {
		url = scheme + "://" + ln.Addr().String() + mcphttp.Path
		if ep.loopback {
			parts = append(parts, "loopback only")
		} else {
			parts = append(parts, "reachable from the network")
		}
	}
	switch {
	case named != nil && named.set.Named():
		who := plural(len(named.set.Clients()), "named client") + " with their tokens"
		if ho.token != "" {
			who += ", and the owner's"
		}
		parts = append(parts, "bearer token required: "+who)
	case ho.token == "":
		parts = append(parts, "no token")
	default:
		parts = append(parts, "bearer token required")
	}
	if n := len(ho.allowedOrigins); n > 0 {
		parts = append(parts, fmt.Sprintf("%d more origins allowed", n))
	}
	return url, strings.Join(parts, ", ")
}

// healthReport returns what /healthz answers: the version, the tools
// served and whether the backend answers, checked at most once a second.
func healthReport(reg *registry.Registry, backend *socketclient.Client) func() any {
	var mu sync.Mutex
	var checked time.Time
	reachable := false
	return func() any {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(checked) > time.Second {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			reachable = backend.Check(ctx) == nil
			cancel()
			checked = time.Now()
		}
		return struct {
			Status  string `json:"status"`
			Version string `json:"version"`
			Tools   int    `json:"tools"`
			Backend string `json:"backend"`
		}{"ok", version(), reg.Snapshot().Tools().Len(), map[bool]string{true: "reachable", false: "unreachable"}[reachable]}
	}
}

// logWriter makes the HTTP server's own messages (bad handshakes, panics)
// debug lines of the bridge's log.
type logWriter struct{ lg *zerolog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.lg.Debug().Str("from", "http").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
