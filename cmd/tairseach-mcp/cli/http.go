package cli

import (
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
)

// DefaultListen is where --transport http listens unless told otherwise:
// loopback only, on a fixed port clients can be configured with.
const DefaultListen = "127.0.0.1:8411"

// httpOptions are the settings of --transport http.
type httpOptions struct {
	listen           string
	allowedOrigins   []string
	allowedHosts     []string
	tokenFile        string
	tlsCert, tlsKey  string
	insecure         bool
	maxSessions      int
	sessionTimeout   time.Duration
	maxTotalInFlight int
	maxTotalHeld     int
	maxBodySize      int
	headerTimeout    time.Duration
	idleTimeout      time.Duration
	stallTimeout     time.Duration
	maxStreams       int
	maxConnections   int

	token string // read from the file or TAIRSEACH_AUTH_TOKEN by resolve
}

// Defaults of the HTTP limits that protocol and mcphttp leave to us.
const (
	defaultMaxTotalInFlight = 1024
	defaultMaxTotalHeld     = 256 << 20
	defaultHeaderTimeout    = 10 * time.Second
	defaultIdleTimeout      = 60 * time.Second
)

// add adds the flag of the HTTP setting name to fs, and reports whether
// there is such a setting.
func (o *httpOptions) add(fs *pflag.FlagSet, name, usage string) bool {
	switch name {
	case "listen":
		fs.StringVar(&o.listen, name, DefaultListen, usage)
	case "allowed-origins":
		fs.StringArrayVar(&o.allowedOrigins, name, nil, usage)
	case "allowed-hosts":
		fs.StringArrayVar(&o.allowedHosts, name, nil, usage)
	case "auth-token-file":
		fs.StringVar(&o.tokenFile, name, "", usage)
	case "tls-cert":
		fs.StringVar(&o.tlsCert, name, "", usage)
	case "tls-key":
		fs.StringVar(&o.tlsKey, name, "", usage)
	case "insecure-http":
		boolVar(fs, &o.insecure, name, false, usage)
	case "max-sessions":
		countVar(fs, &o.maxSessions, name, mcphttp.DefaultMaxSessions, usage)
	case "session-timeout":
		durationVar(fs, &o.sessionTimeout, name, mcphttp.DefaultSessionTimeout, usage)
	case "max-total-in-flight":
		countVar(fs, &o.maxTotalInFlight, name, defaultMaxTotalInFlight, usage)
	case "max-total-held-bytes":
		sizeVar(fs, &o.maxTotalHeld, name, defaultMaxTotalHeld, usage)
	case "max-body-size":
		sizeVar(fs, &o.maxBodySize, name, mcphttp.DefaultMaxBodySize, usage)
	case "header-timeout":
		durationVar(fs, &o.headerTimeout, name, defaultHeaderTimeout, usage)
	case "idle-timeout":
		durationVar(fs, &o.idleTimeout, name, defaultIdleTimeout, usage)
	case "stall-timeout":
		durationVar(fs, &o.stallTimeout, name, mcphttp.DefaultStallTimeout, usage)
	case "max-streams":
		countVar(fs, &o.maxStreams, name, mcphttp.DefaultMaxStreams, usage)
	case "max-connections":
		countVar(fs, &o.maxConnections, name, mcphttp.DefaultMaxConnections, usage)
	default:
		return false
	}
	return true
}

// resolve checks the settings and reads the token. The environment's
// TAIRSEACH_AUTH_TOKEN is read by the caller into o.token first.
func (o *httpOptions) resolve() error {
	o.allowedOrigins, o.allowedHosts = splitPatterns(o.allowedOrigins), splitPatterns(o.allowedHosts)
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	for name, v := range map[string]time.Duration{"--session-timeout": o.sessionTimeout, "--header-timeout": o.headerTimeout,
		"--idle-timeout": o.idleTimeout, "--stall-timeout": o.stallTimeout} {
		if v <= 0 {
			return fmt.Errorf("%s must be positive, not %s", name, v)
		}
	}
	for name, v := range map[string]int{"--max-sessions": o.maxSessions, "--max-total-in-flight": o.maxTotalInFlight,
		"--max-total-held-bytes": o.maxTotalHeld, "--max-body-size": o.maxBodySize, "--max-streams": o.maxStreams,
		"--max-connections": o.maxConnections} {
		if v <= 0 {
			return fmt.Errorf("%s must be positive, not %d", name, v)
		}
	}
	var err error
	if o.token, err = o.bearerToken(); err != nil {
		return err
	}
	ep, err := o.endpoint()
	if err != nil || ep.loopback {
		return err
	}
	switch {
	case o.token == "":
		return fmt.Errorf("--listen %s is reachable from other machines: set a bearer token with --auth-token-file (or TAIRSEACH_AUTH_TOKEN) first", o.listen)
	case o.tlsCert == "" && !o.insecure:
		return fmt.Errorf("--listen %s is reachable from other machines: serve HTTPS with --tls-cert and --tls-key, or say --insecure-http to send the token in clear", o.listen)
	}
	return nil
}

// bearerToken returns the token of --auth-token-file, or else of
// TAIRSEACH_AUTH_TOKEN (which the caller read into o.token), trimmed: a
// variable read from a file may end in a newline.
func (o *httpOptions) bearerToken() (string, error) {
	if o.tokenFile == "" {
		return strings.TrimSpace(o.token), nil
	}
	b, err := os.ReadFile(o.tokenFile)
	if err != nil {
		return "", fmt.Errorf("--auth-token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--auth-token-file: %s is empty", o.tokenFile)
	}
	return token, nil
}

// endpoint is where the bridge listens, as --listen says.
type endpoint struct {
	network, address string // for net.Listen
	loopback         bool   // reachable from this machine only
}

// endpoint parses --listen: host:port with a loopback or other address
// (a name must resolve to loopback to count as such), or unix:PATH.
func (o *httpOptions) endpoint() (endpoint, error) {
	if path, ok := strings.CutPrefix(o.listen, "unix:"); ok {
		if path == "" {
			return endpoint{}, errors.New("--listen unix: needs a path, as in unix:/run/user/1000/tairseach-mcp.sock")
		}
		return endpoint{network: "unix", address: path, loopback: true}, nil
	}
	host, port, err := net.SplitHostPort(o.listen)
	if err != nil || port == "" {
		return endpoint{}, fmt.Errorf("--listen %q: want HOST:PORT (127.0.0.1:8411, [::1]:0) or unix:PATH", o.listen)
	}
	ep := endpoint{network: "tcp", address: o.listen}
	if addr, err := netip.ParseAddr(host); err == nil {
		ep.loopback = addr.IsLoopback()
	} else {
		ep.loopback = strings.EqualFold(host, "localhost")
	}
	return ep, nil
}

// handlerOptions are the handler's settings as the flags give them; the
// caller adds the health report and the logger.
func (o *httpOptions) handlerOptions() mcphttp.Options {
	return mcphttp.Options{
		Guard:          mcphttp.Guard{AllowedOrigins: o.allowedOrigins, AllowedHosts: o.allowedHosts, Token: o.token},
		MaxSessions:    o.maxSessions,
		SessionTimeout: o.sessionTimeout,
		MaxBodySize:    int64(o.maxBodySize),
		StallTimeout:   o.stallTimeout,
		MaxStreams:     o.maxStreams,
		MaxConnections: o.maxConnections,
	}
}

// server returns the HTTP server of h with every timeout set as the
// flags say.
func (o *httpOptions) server(h http.Handler, lg *zerolog.Logger) *http.Server {
	return &http.Server{
		Handler: h,
		// A client that never finishes its headers (slow loris) is cut off.
		ReadHeaderTimeout: o.headerTimeout,
		// A body is bounded by --max-body-size; reading it by this.
		ReadTimeout: o.headerTimeout + 30*time.Second,
		// No WriteTimeout: event streams last; each write is bounded by
		// --stall-timeout instead.
		IdleTimeout:    o.idleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		ErrorLog:       log.New(logWriter{lg}, "", 0),
	}
}

// maxHeaderBytes bounds a request's headers: MCP's are a few short ones.
const maxHeaderBytes = 64 << 10
