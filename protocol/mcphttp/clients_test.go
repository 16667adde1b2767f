package mcphttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// fakeClient is a named client whose rate the test sets: it admits left
// calls, then refuses them for wait.
type fakeClient struct {
	opts    protocol.SessionOptions
	revoked chan struct{}

	mu   sync.Mutex
	left int // -1: no rate
	wait time.Duration
}

func (c *fakeClient) Session() protocol.SessionOptions { return c.opts }
func (c *fakeClient) Revoked() <-chan struct{}         { return c.revoked }

func (c *fakeClient) Admit(n int) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left < 0 {
		return 0, true
	}
	if c.left < n {
		return c.wait, false
	}
	c.left -= n
	return 0, true
}

// narrowTools serves the echo and who tools of fakeTools, and no other.
type narrowTools struct{ all *fakeTools }

var narrowSet = protocol.NewToolSet([]protocol.Tool{
	{Name: "echo", Description: "Echoes its arguments.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "who", Description: "Answers its call's principal.", InputSchema: jsontext.Value(`{"type":"object"}`)},
})

func (n narrowTools) Tools() *protocol.ToolSet { return narrowSet }

func (n narrowTools) CallTool(ctx context.Context, call *protocol.Call, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	if req.Name != "echo" && req.Name != "who" {
		return nil, protocol.ErrInvalidParams
	}
	return n.all.CallTool(ctx, call, req)
}

// namedClients is a bridge's clients file, as the guard sees it: "alice"
// sees every tool, "bob" only echo and who and makes two calls before his
// rate refuses more; "owner" is the owner's token.
type namedClients struct {
	alice, bob *fakeClient
	named      bool
}

func newNamedClients(b *bridge) *namedClients {
	principal := func(name string) protocol.Principal {
		return protocol.Principal{Kind: protocol.PrincipalClient, ID: name}
	}
	return &namedClients{
		alice: &fakeClient{opts: protocol.SessionOptions{Principal: principal("alice")}, revoked: make(chan struct{}), left: -1},
		bob: &fakeClient{opts: protocol.SessionOptions{Principal: principal("bob"), Providers: &protocol.Providers{Tools: narrowTools{b.tools}}},
			revoked: make(chan struct{}), left: 2, wait: 1500 * time.Millisecond},
		named: true,
	}
}

func (n *namedClients) lookup(token string) (Client, bool) {
	switch token {
	case "alice-token":
		return n.alice, n.named
	case "bob-token":
		return n.bob, n.named
	}
	return nil, n.named
}

// clientsBridge is a bridge whose guard knows the named clients and the
// owner's token.
func clientsBridge(t *testing.T) (*bridge, *namedClients) {
	var n *namedClients
	b := newBridge(t, Options{Guard: Guard{Token: "owner-token", Clients: func(token string) (Client, bool) { return n.lookup(token) }}}, nil)
	n = newNamedClients(b)
	return b, n
}

// The guard's decisions with named clients: every request needs a token,
// loopback included, the owner's (no client) or a client's (that client);
// without named clients, as before.
func TestGuardWithNamedClients(t *testing.T) {
	alice := &fakeClient{}
	for _, tt := range []struct {
		name   string
		owner  string // the owner's token, "" for none
		named  bool
		auth   string
		status int
		client Client
	}{
		{"no token, on loopback", "owner-token", true, "", 401, nil},
		{"no token and no owner's, on loopback", "", true, "", 401, nil},
		{"a client's token", "owner-token", true, "Bearer alice-token", 0, alice},
		{"a client's token, no owner's", "", true, "Bearer alice-token", 0, alice},
		{"the owner's token", "owner-token", true, "Bearer owner-token", 0, nil},
		{"a token of nobody", "owner-token", true, "Bearer nobody", 401, nil},
		{"no named clients now: no token, no owner's", "", false, "", 0, nil},
		{"no named clients now: the owner's token", "owner-token", false, "Bearer owner-token", 0, nil},
		{"no named clients now: a client's token is nobody's", "owner-token", false, "Bearer alice-token", 401, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := Guard{Token: tt.owner, Clients: func(token string) (Client, bool) {
				if token == "alice-token" && tt.named {
					return alice, true
				}
				return nil, tt.named
			}}
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8411"+Path, nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			d := g.Check(r, true)
			if d.Status != tt.status || d.Client != tt.client {
				t.Errorf("decision %+v, want status %d, client %v", d, tt.status, tt.client)
			}
			if health := g.Check(r, false); health.Status != 0 {
				t.Errorf("the health check: %+v", health)
			}
		})
	}
}

// Two clients at once see their own tools; one is refused a call the
// other makes; each call is for its client, in both eras.
func TestNamedClientsSeeTheirOwnViews(t *testing.T) {
	b, _ := clientsBridge(t)
	as := func(token string, c *client) *client { c.token = token; return c }
	alice, bob := b.modern(t), b.modern(t)
	alice.token, bob.token = "alice-token", "bob-token"
	aliceLegacy := as("alice-token", b.modern(t))
	aliceLegacy.initialize("2025-11-25")
	bobLegacy := as("bob-token", b.modern(t))
	bobLegacy.initialize("2025-11-25")

	names := func(c *client, body string) string {
		t.Helper()
		r := c.post(body)
		var resp struct {
			Result struct{ Tools []struct{ Name string } }
		}
		if err := json.Unmarshal(r.body, &resp, json.MatchCaseInsensitiveNames(true), json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("tools/list: %d %s", r.status, r.body)
		}
		var out []string
		for _, tool := range resp.Result.Tools {
			out = append(out, tool.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(bobLegacy, request(2, "tools/list", "")); got != "echo,who" {
		t.Errorf("bob's list: %s", got)
	}
	if got := names(bob, modern(2, "tools/list", "")); got != "echo,who" {
		t.Errorf("bob's list, 2026-07-28: %s", got)
	}
	if got := names(aliceLegacy, request(2, "tools/list", "")); !strings.Contains(got, "big") {
		t.Errorf("alice's list: %s", got)
	}
	if r := aliceLegacy.post(call(3, "big", `{"n":3}`)); r.status != 200 || r.errorCode() != 0 {
		t.Errorf("alice calls big: %d %s", r.status, r.body)
	}
	if r := bobLegacy.post(call(3, "big", `{"n":3}`)); r.errorCode() != protocol.CodeInvalidParams {
		t.Errorf("bob calls big, which he does not see: %d %s", r.status, r.body)
	}
	if got := aliceLegacy.whoCalls(t, false); got != "client:alice" {
		t.Errorf("alice's call is for %s", got)
	}
	if got := alice.whoCalls(t, true); got != "client:alice" {
		t.Errorf("alice's modern call is for %s", got)
	}
	// A session is its client's: another token does not find it.
	stolen := as("alice-token", b.modern(t))
	stolen.session, stolen.version = bobLegacy.session, bobLegacy.version
	if r := stolen.post(request(9, "ping", "")); r.status != http.StatusNotFound {
		t.Errorf("alice's token with bob's session: %d, want 404", r.status)
	}
}

// A client over its rate gets 429 with Retry-After and a JSON-RPC error
// carrying retryAfterMs (and the request's id, none for a batch); other
// clients, and requests that are not calls, are not affected.
func TestAClientOverItsRateGets429(t *testing.T) {
	b, n := clientsBridge(t)
	bob := b.modern(t)
	bob.token = "bob-token"
	bob.initialize("2025-03-26")
	for i := range 2 {
		if r := bob.post(call(10+i, "echo", `{}`)); r.status != 200 {
			t.Fatalf("bob's call %d within his rate: %d %s", i+1, r.status, r.body)
		}
	}
	r := bob.post(call(12, "echo", `{}`))
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "2" {
		t.Errorf("bob's third call: %d, Retry-After %q; want 429, 2", r.status, r.header.Get("Retry-After"))
	}
	if want := `{"jsonrpc":"2.0","id":12,"error":{"code":-32000,"message":"too many calls: this client is over its rate of calls; try again in 2s","data":{"retryAfterMs":1500}}}` + "\n"; string(r.body) != want {
		t.Errorf("the 429's body:\n%s\nwant\n%s", r.body, want)
	}
	if r := bob.post(request(13, "tools/list", "")); r.status != 200 {
		t.Errorf("bob lists over his rate: %d", r.status)
	}
	batch := "[" + call(14, "echo", `{}`) + "," + call(15, "echo", `{}`) + "]"
	if r := bob.post(batch); r.status != http.StatusTooManyRequests || strings.Contains(string(r.body), `"id"`) {
		t.Errorf("a batch over the rate: %d %s, want 429 without an id", r.status, r.body)
	}
	modernBob := b.modern(t)
	modernBob.token = "bob-token"
	if r := modernBob.post(modern(16, "tools/call", `"name":"echo","arguments":{}`)); r.status != http.StatusTooManyRequests || r.errorCode() != protocol.CodeRateLimited {
		t.Errorf("a modern call over the rate: %d %s", r.status, r.body)
	}

	alice := b.modern(t)
	alice.token = "alice-token"
	alice.initialize("2025-11-25")
	for i := range 5 {
		if r := alice.post(call(20+i, "echo", `{}`)); r.status != 200 {
			t.Errorf("alice's call %d, while bob is over his rate: %d", i+1, r.status)
		}
	}
	n.bob.mu.Lock()
	n.bob.left = 2
	n.bob.mu.Unlock()
	if r := bob.post(batch); r.status != 200 || len(r.body) == 0 {
		t.Errorf("a batch within the rate: %d %s", r.status, r.body)
	}
}

// A revoked client's sessions end: its GET stream closes, its next
// request naming the session gets 404, and its modern calls in flight are
// cancelled; another client's session lives on.
func TestARevokedClientsSessionsEnd(t *testing.T) {
	b, n := clientsBridge(t)
	bob := b.modern(t)
	bob.token = "bob-token"
	bob.initialize("2025-11-25")
	alice := b.modern(t)
	alice.token = "alice-token"
	alice.initialize("2025-11-25")
	aliceGet := alice.open(http.MethodGet, "")
	inFlight := make(chan *reply, 1)
	aliceModern := b.modern(t)
	aliceModern.token = "alice-token"
	go func() { inFlight <- aliceModern.post(modern(5, "tools/call", `"name":"wait","arguments":{}`)) }()
	waitFor(t, b.tools.started, "the modern call to start")

	close(n.alice.revoked)
	if got := b.h.EndRevoked(); got != 2 {
		t.Errorf("EndRevoked ended %d sessions, want 2 (alice's legacy and modern)", got)
	}
	if evs := aliceGet.end(); len(evs) != 0 {
		t.Errorf("alice's GET stream carried %q as it ended", evs)
	}
	if r := alice.post(request(6, "ping", "")); r.status != http.StatusNotFound {
		t.Errorf("alice's session after she was revoked: %d, want 404", r.status)
	}
	waitFor(t, b.tools.cancelled, "the modern call to be cancelled")
	<-inFlight
	if r := bob.post(request(7, "ping", "")); r.status != 200 {
		t.Errorf("bob's session: %d", r.status)
	}
}
