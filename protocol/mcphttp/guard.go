package mcphttp

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// Guard decides who may use the endpoint. It is the one place the
// handler's security decisions live: the Origin and Host a browser sends
// (against DNS rebinding), and the bearer token. Its zero value allows
// loopback origins and hosts only, and asks for no token.
type Guard struct {
	// AllowedOrigins are origins allowed besides loopback ones, matched
	// exactly (scheme, host and port; no suffix or substring matching),
	// e.g. "https://app.example".
	AllowedOrigins []string
	// AllowedHosts are Host header values allowed besides loopback ones
	// and the address the client connected to, matched exactly (host, and
	// port when given), e.g. "bridge.lan:8411".
	AllowedHosts []string
	// Token, when set, is the bearer token every request but /healthz
	// must carry in Authorization. With named clients it is the owner's,
	// with every right.
	Token string
	// Clients, when set, resolves a bearer token to the named client it
	// belongs to (a clients file); named reports whether the bridge has
	// named clients now. While it has, every request but /healthz must
	// carry the owner's token or a client's, loopback included, and a
	// client's selects the client. It must not block.
	Clients func(token string) (c Client, named bool)
}

// Client is a named client, as the handler serves it: its sessions serve
// its view with its rights, and its calls draw on its rate.
type Client interface {
	// Session returns the options of the client's sessions: its
	// principal, its view and its rights. The handler sets Transport.
	Session() protocol.SessionOptions
	// Admit takes n calls from the client's rate; when the client is
	// over it, it takes none and returns how long until it may make
	// them (answered 429). It must not block.
	Admit(n int) (retryAfter time.Duration, ok bool)
	// Revoked returns a channel closed once the client is removed or its
	// token replaced: its sessions end (see Handler.EndRevoked).
	Revoked() <-chan struct{}
}

// Decision is what the guard says of a request: Allow, or the status to
// refuse it with and why.
type Decision struct {
	Status int    // 0 when allowed
	Reason string // for the response body and the log; never the token
	// Client is the named client the request's token selects; nil for
	// the owner's token, and without named clients.
	Client Client
}

// Check decides on r. checkToken is false for the health endpoint, which
// tells nothing secret.
func (g *Guard) Check(r *http.Request, checkToken bool) Decision {
	if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o) {
		return Decision{Status: http.StatusForbidden, Reason: "origin not allowed: " + o}
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !g.hostAllowed(r.Host, local) {
		return Decision{Status: http.StatusForbidden, Reason: "host not allowed: " + r.Host}
	}
	if !checkToken {
		return Decision{}
	}
	header := r.Header.Get("Authorization")
	if g.Clients != nil {
		token, _ := bearer(header)
		switch c, named := g.Clients(token); {
		case c != nil:
			return Decision{Client: c}
		case named && (g.Token == "" || !g.tokenMatches(header)):
			return Decision{Status: http.StatusUnauthorized, Reason: "missing or wrong bearer token: this bridge serves named clients, each with its own token"}
		case named:
			return Decision{} // the owner
		}
	}
	if g.Token != "" && !g.tokenMatches(header) {
		return Decision{Status: http.StatusUnauthorized, Reason: "missing or wrong bearer token"}
	}
	return Decision{}
}

// originAllowed reports whether origin (scheme://host[:port], or "null")
// is a loopback origin or one named exactly.
func (g *Guard) originAllowed(origin string) bool {
	if slices.Contains(g.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

// hostAllowed reports whether a Host header names this server: a
// loopback name or address, the address the client connected to (local:
// a rebinding attack names a host, never an address), or one named
// exactly. Clients of a Unix socket send a loopback name (localhost).
func (g *Guard) hostAllowed(host string, local net.Addr) bool {
	if host == "" {
		return false
	}
	if local != nil && local.Network() == "tcp" && host == local.String() || slices.Contains(g.AllowedHosts, host) {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	return isLoopbackHost(strings.Trim(name, "[]"))
}

// isLoopbackHost reports whether a host name or address is loopback:
// "localhost", 127.0.0.0/8 or ::1.
func isLoopbackHost(name string) bool {
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// tokenMatches compares the header's bearer token with Token in constant
// time (of equal-length digests, so the token's length does not show).
func (g *Guard) tokenMatches(header string) bool {
	token, ok := bearer(header)
	if !ok {
		return false
	}
	got, want := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(g.Token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// bearer returns the token of an Authorization header of the Bearer
// scheme, whose name has no case.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// tokenKey identifies the credentials a request carried, to bind a
// session to the token that made it: the same bearer token however its
// header is spelt; "" without credentials.
func tokenKey(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if h == "" {
		return ""
	}
	if token, ok := bearer(h); ok {
		h = "Bearer " + token
	}
	sum := sha256.Sum256([]byte(h))
	return string(sum[:])
}

// taskOwner returns who owns the tasks of r, a request for who (the zero
// Principal: its session), lasting telling whether who outlives the
// connection (a named client, a bearer token's holder): then who; else,
// on loopback or the Unix socket, the local user, whom every such request
// names the same, so that a client that reconnects finds its tasks; else
// who.
func taskOwner(r *http.Request, who protocol.Principal, lasting bool) protocol.Principal {
	if lasting {
		return who
	}
	switch local := r.Context().Value(http.LocalAddrContextKey).(type) {
	case *net.UnixAddr:
		return protocol.Principal{Kind: protocol.PrincipalLocal}
	case *net.TCPAddr:
		if local.IP.IsLoopback() {
			return protocol.Principal{Kind: protocol.PrincipalLocal}
		}
	}
	return who
}

// tokenPrincipal returns the principal of a request that carried a bearer
// token, named by a digest of the token (never the token), and false for
// a request without one.
func tokenPrincipal(r *http.Request) (protocol.Principal, bool) {
	token, ok := bearer(r.Header.Get("Authorization"))
	if !ok || token == "" {
		return protocol.Principal{}, false
	}
	sum := sha256.Sum256([]byte(token))
	return protocol.Principal{Kind: protocol.PrincipalToken, ID: hex.EncodeToString(sum[:8])}, true
}
