package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
)

// What the guard refuses is refused before anything else, with the
// status the specification asks for and a JSON-RPC error without an id.
func TestRefusalsAtTheDoor(t *testing.T) {
	t.Parallel()
	const token = "the-bearer-token-1234"
	logs := newLogLines()
	lg := zerolog.New(logs).Level(zerolog.TraceLevel)
	b := newBridge(t, Options{Guard: Guard{Token: token}, Logger: &lg, Health: func() any { return map[string]int{"tools": 6} }}, nil)
	tests := []struct {
		name   string
		path   string
		header headers
		host   string
		status int
	}{
		{"a foreign origin", Path, headers{"Origin": "https://evil.example", "Authorization": "Bearer " + token}, "", 403},
		{"a rebinding host", Path, headers{"Authorization": "Bearer " + token}, "evil.example", 403},
		{"no token", Path, nil, "", 401},
		{"a wrong token", Path, headers{"Authorization": "Bearer not-" + token}, "", 401},
		{"the token as a query", Path + "?access_token=" + token, nil, "", 401},
		{"the health check without a token", HealthPath, nil, "", 200},
		{"the health check of a rebinding host", HealthPath, nil, "evil.example", 403},
		{"another path", "/other", headers{"Authorization": "Bearer " + token}, "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, body := http.MethodPost, initialize(1, "2025-11-25")
			if tt.path != Path {
				method, body = http.MethodGet, ""
			}
			c := b.modern(t)
			c.version = ""
			req := c.request(t.Context(), method, body, tt.header)
			req.URL.Path, req.URL.RawQuery, _ = strings.Cut(tt.path, "?")
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := b.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("WWW-Authenticate"); (tt.status == 401) != strings.HasPrefix(got, "Bearer") {
				t.Errorf("WWW-Authenticate %q with %d", got, resp.StatusCode)
			}
		})
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token is in the log:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "request refused") {
		t.Errorf("the refusals are not logged:\n%s", logs)
	}
}

// A session belongs to the token that made it: with another token, or
// none, it does not exist. The same token written another way is the
// same token.
func TestSessionsAreBoundToTheirToken(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.modern(t)
	c.version, c.token = "", "alice"
	c.initialize("2025-11-25")
	for _, tt := range []struct {
		auth   string
		status int
	}{
		{"Bearer bob", 404},
		{"", 404},
		{"Bearer alice", 200},
		{"bearer  alice", 200},
	} {
		r := c.post(request(3, "ping", ""), headers{"Authorization": tt.auth})
		if r.status != tt.status {
			t.Errorf("Authorization %q: %d %s, want %d", tt.auth, r.status, r.body, tt.status)
		}
	}
}

// Session ids are 128 random bits: none repeats.
func TestSessionIDsAreUnguessable(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{MaxSessions: 100}, nil)
	hexID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 100 {
		c := b.legacy(t, "2025-11-25")
		if !hexID.MatchString(c.session) || seen[c.session] {
			t.Fatalf("session id %q: not 32 hex digits, or seen before", c.session)
		}
		seen[c.session] = true
	}
}

// Nothing a client sends makes the bridge read a file or open a URL: the
// names of files and URLs in requests and headers stay names.
func TestClientsCannotMakeTheBridgeReadFilesOrOpenURLs(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("the-secret-contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	var fetched atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { fetched.Add(1) }))
	defer web.Close()

	b := newBridge(t, Options{Guard: Guard{AllowedOrigins: []string{web.URL}}}, nil)
	fileURI, webURL := "file://"+secret, web.URL+"/x"
	legacy := b.legacy(t, "2025-11-25")
	modernC := b.modern(t)
	var replies []*reply
	for _, uri := range []string{fileURI, webURL, secret} {
		replies = append(replies,
			legacy.post(request(5, "resources/read", `{"uri":"`+uri+`"}`)),
			legacy.post(request(6, "prompts/get", `{"name":"`+uri+`"}`)),
			legacy.post(call(7, uri, `{"$ref":"`+uri+`"}`)),
			modernC.post(modern(8, "resources/read", `"uri":"`+uri+`"`)),
			modernC.post(modern(9, "tools/call", `"name":"echo","arguments":{"$ref":"`+uri+`","$schema":"`+uri+`"}`)),
		)
	}
	replies = append(replies,
		legacy.post(request(10, "ping", ""), headers{"Origin": web.URL, "Referer": webURL, "Link": "<" + webURL + ">"}),
		legacy.post(initialize(11, "2025-11-25"), headers{"Mcp-Session-Id": "", "MCP-Protocol-Version": "", "Origin": web.URL}))
	for _, r := range replies {
		if strings.Contains(string(r.body), "the-secret-contents") {
			t.Errorf("a reply holds the file's contents: %s", r.body)
		}
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("the bridge fetched a client's URL %d times", n)
	}
}
