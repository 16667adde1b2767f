package console

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Who may open the console, and what a request must show, decided in one
// place before any page is made:
//
//   - the Host and Origin checks of the MCP endpoint (mcphttp.Guard), so a
//     rebinding page cannot name the console;
//   - an Origin, when sent, of the console itself; a POST must send one
//     (browsers do) unless it carries the owner's bearer token, and a
//     Sec-Fetch-Site, when sent, must be same-origin;
//   - the owner: the secret of the URL the bridge logged, exchanged at once
//     for a cookie (HttpOnly, SameSite=Strict) and a redirect to the same
//     page without it; the cookie; or the owner's bearer token. Being on
//     loopback is not enough: any local process could otherwise answer a
//     question for a destructive call. A named client's token never opens
//     the console;
//   - a POST, from the cookie, carries a CSRF token of the page it was
//     made on, signed with the cookie's session.

// cookieName is the cookie of an owner's browser session.
const cookieName = "tairseach_console"

// maxSessions bounds the browser sessions kept; past it the one used the
// longest ago is forgotten (its browser opens the URL again).
const maxSessions = 16

// sessions are the owner's browser sessions, by the id their cookie
// holds.
type sessions struct {
	mu   sync.Mutex
	byID map[string]time.Time // last use
}

func (s *sessions) add() string {
	id := randomHex(16)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]time.Time{}
	}
	if len(s.byID) >= maxSessions {
		oldest, at := "", time.Time{}
		for k, t := range s.byID {
			if oldest == "" || t.Before(at) {
				oldest, at = k, t
			}
		}
		delete(s.byID, oldest)
	}
	s.byID[id] = time.Now()
	return id
}

func (s *sessions) valid(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok {
		return false
	}
	s.byID[id] = time.Now()
	return true
}

// viewer is who a request is for, once admitted: the browser session of
// its cookie, or "" for the owner's bearer token.
type viewer struct{ session string }

// securityHeaders are set on every response of the console.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make a form's POST say Origin: null
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}

// admit decides on r: the viewer it is for, or false once it has
// answered (a refusal, or the redirect that takes the secret out of the
// address).
func (c *Console) admit(w http.ResponseWriter, r *http.Request) (viewer, bool) {
	if d := c.opts.Guard.Check(r, false); d.Status != 0 {
		c.refuse(w, r, d.Status, d.Reason)
		return viewer{}, false
	}
	if o := r.Header.Get("Origin"); o != "" && o != c.origin(r) {
		c.refuse(w, r, http.StatusForbidden, "a request from another origin")
		return viewer{}, false
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && (r.Method == http.MethodPost || s != "none") {
		c.refuse(w, r, http.StatusForbidden, "a request from another site")
		return viewer{}, false
	}
	if c.ownerToken(r) {
		return viewer{}, true
	}
	if r.Header.Get("Authorization") != "" {
		c.refuse(w, r, http.StatusUnauthorized, "this token does not open the console: only the owner's does")
		return viewer{}, false
	}
	if s := r.URL.Query().Get("s"); s != "" {
		if r.Method != http.MethodGet || !c.secretMatches(s) {
			c.refuse(w, r, http.StatusUnauthorized, "a wrong or old secret")
			return viewer{}, false
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: c.browsers.add(), Path: Path, HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: c.opts.Secure})
		q := r.URL.Query()
		q.Del("s")
		to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, to.String(), http.StatusSeeOther)
		return viewer{}, false
	}
	if ck, err := r.Cookie(cookieName); err == nil && c.browsers.valid(ck.Value) {
		if r.Method == http.MethodPost && r.Header.Get("Origin") == "" {
			c.refuse(w, r, http.StatusForbidden, "a POST without an Origin")
			return viewer{}, false
		}
		return viewer{session: ck.Value}, true
	}
	c.refuse(w, r, http.StatusUnauthorized, "")
	return viewer{}, false
}

// origin is the origin a request of the console's own pages has.
func (c *Console) origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (c *Console) secretMatches(s string) bool {
	got, want := sha256.Sum256([]byte(s)), sha256.Sum256([]byte(c.secret))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// ownerToken reports whether r carries the owner's bearer token.
func (c *Console) ownerToken(r *http.Request) bool {
	token := c.opts.Guard.Token
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if token == "" || !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	a, b := sha256.Sum256([]byte(strings.TrimSpace(got))), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// csrf returns a new CSRF token for a page shown to v: a nonce, signed
// with v's session.
func (c *Console) csrf(v viewer) string {
	nonce := randomHex(8)
	return nonce + "." + c.mac("csrf", v.session, nonce)[:32]
}

// csrfValid reports whether token was made for a page shown to v. The
// owner's bearer token needs none: no browser sends it by itself.
func (c *Console) csrfValid(v viewer, token string) bool {
	if v.session == "" {
		return true
	}
	nonce, sig, ok := strings.Cut(token, ".")
	if !ok {
		return false
	}
	want := c.mac("csrf", v.session, nonce)[:32]
	return subtle.ConstantTimeCompare([]byte(sig), []byte(want)) == 1
}

// refuse answers a request the console does not serve: why is logged,
// and a 401 says how to open the console.
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	if why != "" {
		c.log.Warn().Int("status", status).Str("reason", why).Str("remote", r.RemoteAddr).Str("path", r.URL.Path).Msg("console request refused")
	}
	c.pages.refusal(w, status, why)
}
