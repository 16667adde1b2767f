package mcphttp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGuard is the table of the guard's decisions: loopback origins and
// hosts, and those named, matched exactly; the bearer token.
func TestGuard(t *testing.T) {
	const token, wrong = "s3cret-token", "n0t-the-t0ken"
	loopback := Guard{}
	named := Guard{AllowedOrigins: []string{"https://app.example"}, AllowedHosts: []string{"bridge.lan:8411"}}
	lan := Guard{Token: token}
	tests := []struct {
		name   string
		g      Guard
		host   string
		origin string
		auth   string
		health bool // the health check, which needs no token
		want   int
	}{
		{"no origin, a loopback address", loopback, "127.0.0.1:8411", "", "", false, 0},
		{"localhost", loopback, "localhost:8411", "", "", false, 0},
		{"LOCALHOST in capitals", loopback, "LOCALHOST:8411", "", "", false, 0},
		{"the IPv6 loopback", loopback, "[::1]:8411", "", "", false, 0},
		{"a loopback host without a port", loopback, "localhost", "", "", false, 0},
		{"another loopback address", loopback, "127.0.0.2:8411", "", "", false, 0},
		{"a loopback origin", loopback, "127.0.0.1:8411", "http://localhost:5173", "", false, 0},
		{"a loopback origin by address", loopback, "127.0.0.1:8411", "http://127.0.0.1:8411", "", false, 0},
		{"an IPv6 loopback origin", loopback, "127.0.0.1:8411", "https://[::1]:8443", "", false, 0},

		{"a rebinding host name", loopback, "evil.example:8411", "", "", false, 403},
		{"a host that only starts like localhost", loopback, "localhost.evil.example:8411", "", "", false, 403},
		{"a host that only ends like localhost", loopback, "evillocalhost:8411", "", "", false, 403},
		{"a host that only starts like a loopback address", loopback, "127.0.0.1.nip.io:8411", "", "", false, 403},
		{"a loopback address in another form", loopback, "2130706433:8411", "", "", false, 403},
		{"no host", loopback, "", "", "", false, 403},
		{"a foreign origin", loopback, "127.0.0.1:8411", "https://evil.example", "", false, 403},
		{"an origin that only starts like localhost", loopback, "127.0.0.1:8411", "http://localhost.evil.example", "", false, 403},
		{"an origin that only ends like localhost", loopback, "127.0.0.1:8411", "http://evil-localhost", "", false, 403},
		{"an origin that hides localhost in its user", loopback, "127.0.0.1:8411", "http://localhost@evil.example", "", false, 403},
		{"an origin with a path", loopback, "127.0.0.1:8411", "http://localhost/x", "", false, 403},
		{"an opaque origin", loopback, "127.0.0.1:8411", "null", "", false, 403},
		{"an origin of another scheme", loopback, "127.0.0.1:8411", "file://localhost", "", false, 403},
		{"the health check heeds the origin too", loopback, "127.0.0.1:8411", "https://evil.example", "", true, 403},

		{"a named origin", named, "127.0.0.1:8411", "https://app.example", "", false, 0},
		{"a named origin with a port it was not named with", named, "127.0.0.1:8411", "https://app.example:443", "", false, 403},
		{"a named origin in another scheme", named, "127.0.0.1:8411", "http://app.example", "", false, 403},
		{"a subdomain of a named origin", named, "127.0.0.1:8411", "https://evil.app.example", "", false, 403},
		{"a named origin as a prefix", named, "127.0.0.1:8411", "https://app.example.evil", "", false, 403},
		{"a named host", named, "bridge.lan:8411", "", "", false, 0},
		{"a named host without its port", named, "bridge.lan", "", "", false, 403},
		{"a subdomain of a named host", named, "x.bridge.lan:8411", "", "", false, 403},
		{"a named host as a prefix", named, "bridge.lan:84111", "", "", false, 403},

		{"the address the client connected to", lan, "192.168.1.5:8411", "", "Bearer " + token, false, 0},
		{"that address with another port", lan, "192.168.1.5:8412", "", "Bearer " + token, false, 403},
		{"another address of the network", lan, "192.168.1.6:8411", "", "Bearer " + token, false, 403},
		{"no token", lan, "192.168.1.5:8411", "", "", false, 401},
		{"a wrong token", lan, "192.168.1.5:8411", "", "Bearer " + wrong, false, 401},
		{"a token that only starts like it", lan, "192.168.1.5:8411", "", "Bearer " + token + "x", false, 401},
		{"a prefix of the token", lan, "192.168.1.5:8411", "", "Bearer " + token[:5], false, 401},
		{"the token as Basic credentials", lan, "192.168.1.5:8411", "", "Basic " + token, false, 401},
		{"the token without a scheme", lan, "192.168.1.5:8411", "", token, false, 401},
		{"the scheme in lower case", lan, "192.168.1.5:8411", "", "bearer " + token, false, 0},
		{"the health check needs no token", lan, "192.168.1.5:8411", "", "", true, 0},
		{"a foreign origin before the token", lan, "192.168.1.5:8411", "https://evil.example", "Bearer " + token, false, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The client connected to 192.168.1.5:8411, as to a listener
			// on 0.0.0.0, whatever its Host header says.
			local := &net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 8411}
			ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(local))
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://x"+Path, nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			d := tt.g.Check(r, !tt.health)
			if d.Status != tt.want {
				t.Errorf("status %d (%s), want %d", d.Status, d.Reason, tt.want)
			}
			if d.Status != 0 && d.Reason == "" {
				t.Error("a refusal without a reason")
			}
			if strings.Contains(d.Reason, token) || strings.Contains(d.Reason, wrong) {
				t.Errorf("the reason tells the token: %s", d.Reason)
			}
		})
	}
}

// BenchmarkTokenCheck compares a right token with wrong ones that differ
// early, late, or in length: the comparison takes the same time for
// each (compare with benchstat), so that timing tells nothing of the
// token.
func BenchmarkTokenCheck(b *testing.B) {
	const token = "0123456789abcdef0123456789abcdef"
	g := Guard{Token: token}
	for _, tt := range []struct{ name, header string }{
		{"right", "Bearer " + token},
		{"first byte wrong", "Bearer X" + token[1:]},
		{"last byte wrong", "Bearer " + token[:len(token)-1] + "X"},
		{"shorter", "Bearer " + token[:4]},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.tokenMatches(tt.header)
			}
		})
	}
}
