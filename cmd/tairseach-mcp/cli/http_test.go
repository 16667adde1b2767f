package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
)

// httpLimits are the settings of every HTTP limit, as the server, the
// handler and the HTTP server get them.
type httpLimits struct {
	srv *protocol.Server
	h   mcphttp.Options
	hs  struct{ header, idle time.Duration }
}

func limitsOf(t *testing.T, vars map[string]string, args ...string) httpLimits {
	t.Helper()
	o, err := parse(t, vars, append([]string{"--transport", "http"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	lg := zerolog.Nop()
	hs := o.http.server(nil, &lg)
	l := httpLimits{srv: newServer(o, &lg, nil), h: o.http.handlerOptions()}
	l.hs.header, l.hs.idle = hs.ReadHeaderTimeout, hs.IdleTimeout
	return l
}

// Each limit of the HTTP transport has its flag and its variable, and a
// default, and each reaches the part that enforces it.
func TestHTTPLimitsFollowTheirFlagsAndVariables(t *testing.T) {
	tests := []struct {
		flag, env, value string
		def              any
		got              func(httpLimits) any
		want             any
	}{
		{"max-sessions", "TAIRSEACH_MAX_SESSIONS", "7", 64, func(l httpLimits) any { return l.h.MaxSessions }, 7},
		{"session-timeout", "TAIRSEACH_SESSION_TIMEOUT", "90s", 30 * time.Minute, func(l httpLimits) any { return l.h.SessionTimeout }, 90 * time.Second},
		{"max-in-flight", "TAIRSEACH_MAX_IN_FLIGHT", "5", 256, func(l httpLimits) any { return l.srv.MaxInFlight }, 5},
		{"max-total-in-flight", "TAIRSEACH_MAX_TOTAL_IN_FLIGHT", "9", 1024, func(l httpLimits) any { return l.srv.MaxTotalInFlight }, 9},
		{"max-held-bytes", "TAIRSEACH_MAX_HELD_BYTES", "1MiB", 64 << 20, func(l httpLimits) any { return l.srv.MaxHeldBytes }, 1 << 20},
		{"max-total-held-bytes", "TAIRSEACH_MAX_TOTAL_HELD_BYTES", "8MiB", 256 << 20, func(l httpLimits) any { return l.srv.MaxTotalHeldBytes }, 8 << 20},
		{"max-body-size", "TAIRSEACH_MAX_BODY_SIZE", "1KiB", int64(4 << 20), func(l httpLimits) any { return l.h.MaxBodySize }, int64(1 << 10)},
		{"header-timeout", "TAIRSEACH_HEADER_TIMEOUT", "3s", 10 * time.Second, func(l httpLimits) any { return l.hs.header }, 3 * time.Second},
		{"idle-timeout", "TAIRSEACH_IDLE_TIMEOUT", "7s", 60 * time.Second, func(l httpLimits) any { return l.hs.idle }, 7 * time.Second},
		{"stall-timeout", "TAIRSEACH_STALL_TIMEOUT", "2s", 10 * time.Second, func(l httpLimits) any { return l.h.StallTimeout }, 2 * time.Second},
		{"max-streams", "TAIRSEACH_MAX_STREAMS", "3", 256, func(l httpLimits) any { return l.h.MaxStreams }, 3},
		{"max-connections", "TAIRSEACH_MAX_CONNECTIONS", "12", 256, func(l httpLimits) any { return l.h.MaxConnections }, 12},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			if got := tt.got(limitsOf(t, nil)); got != tt.def {
				t.Errorf("default %v, want %v", got, tt.def)
			}
			if got := tt.got(limitsOf(t, nil, "--"+tt.flag, tt.value)); got != tt.want {
				t.Errorf("--%s %s: %v, want %v", tt.flag, tt.value, got, tt.want)
			}
			if got := tt.got(limitsOf(t, map[string]string{tt.env: tt.value})); got != tt.want {
				t.Errorf("%s=%s: %v, want %v", tt.env, tt.value, got, tt.want)
			}
			if _, err := parse(t, nil, "--transport", "http", "--"+tt.flag, "0"); err == nil {
				t.Errorf("--%s 0 was accepted", tt.flag)
			}
		})
	}
}

// A listener others can reach needs a token, and TLS unless
// --insecure-http says the token may travel in clear; loopback and a
// Unix socket need neither.
func TestHTTPListenerSafety(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	token := map[string]string{"TAIRSEACH_AUTH_TOKEN": "s3cret"}
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want string // in the refusal; "" for none
	}{
		{"loopback needs nothing", nil, []string{"--listen", "127.0.0.1:0"}, ""},
		{"IPv6 loopback needs nothing", nil, []string{"--listen", "[::1]:0"}, ""},
		{"localhost needs nothing", nil, []string{"--listen", "localhost:0"}, ""},
		{"a Unix socket needs nothing", nil, []string{"--listen", "unix:/tmp/x.sock"}, ""},
		{"every address without a token", nil, []string{"--listen", "0.0.0.0:0"}, "set a bearer token with --auth-token-file"},
		{"every IPv6 address without a token", nil, []string{"--listen", "[::]:8411"}, "set a bearer token"},
		{"a host name without a token", nil, []string{"--listen", "bridge.lan:8411"}, "set a bearer token"},
		{"a token but no TLS", token, []string{"--listen", "0.0.0.0:0"}, "serve HTTPS with --tls-cert and --tls-key, or say --insecure-http"},
		{"a token file but no TLS", nil, []string{"--listen", "0.0.0.0:0", "--auth-token-file", tokenFile}, "or say --insecure-http"},
		{"an empty token file", nil, []string{"--listen", "0.0.0.0:0", "--auth-token-file", empty, "--insecure-http"}, "is empty"},
		{"a blank token variable", map[string]string{"TAIRSEACH_AUTH_TOKEN": " \n"}, []string{"--listen", "0.0.0.0:0", "--insecure-http"}, "set a bearer token"},
		{"a token and --insecure-http", token, []string{"--listen", "0.0.0.0:0", "--insecure-http"}, ""},
		{"a token and TLS", token, []string{"--listen", "0.0.0.0:0", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, ""},
		{"a certificate without its key", token, []string{"--listen", "0.0.0.0:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{"an address without a port", nil, []string{"--listen", "127.0.0.1"}, "want HOST:PORT"},
		{"a Unix socket without a path", nil, []string{"--listen", "unix:"}, "needs a path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Parsed, not run: the bridge would serve.
			_, err := parse(t, tt.vars, append([]string{"--transport", "http"}, tt.args...)...)
			var ue usageError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v; want a usage error with %q", err, tt.want)
			}
		})
	}
}

// The log writer of the HTTP server makes its messages debug lines.
func TestHTTPServerMessagesAreDebugLines(t *testing.T) {
	var b strings.Builder
	lg := zerolog.New(&b).Level(zerolog.DebugLevel)
	var o httpOptions
	hs := o.server(nil, &lg)
	hs.ErrorLog.Print("http: TLS handshake error from 10.0.0.1:5555: EOF")
	if got := b.String(); !strings.Contains(got, `"level":"debug"`) || !strings.Contains(got, "TLS handshake error") {
		t.Errorf("logged %q", got)
	}
}
