package mcphttp

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/go-json-experiment/json"
)

// whoCalls calls the tool "who" as c and returns the principal its call
// was for.
func (c *client) whoCalls(t *testing.T, modernEra bool) string {
	t.Helper()
	body := call(2, "who", "{}")
	if modernEra {
		body = modern(2, "tools/call", `"name":"who","arguments":{}`)
	}
	r := c.post(body)
	if r.status != http.StatusOK {
		t.Fatalf("tools/call who: %d %s", r.status, r.body)
	}
	var resp struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &resp, json.RejectUnknownMembers(false)); err != nil || len(resp.Result.Content) != 1 {
		t.Fatalf("tools/call who: %s (%v)", r.body, err)
	}
	return resp.Result.Content[0].Text
}

// Every request is for a principal: the bearer token's holder (named by
// a digest, never by the token), else the legacy session, else the
// connection of a modern request.
func TestEachRequestIsForItsPrincipal(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	withToken := func(token string, version string) *client {
		c := b.modern(t)
		c.token = token
		if version != "" {
			c.initialize(version)
		}
		return c
	}

	alice1, alice2 := withToken("alice", "2025-11-25"), withToken("alice", "2025-06-18")
	bob := withToken("bob", "2025-11-25")
	aliceModern := withToken("alice", "")
	got := map[string]string{
		"alice, a session":         alice1.whoCalls(t, false),
		"alice, another session":   alice2.whoCalls(t, false),
		"alice, a modern request":  aliceModern.whoCalls(t, true),
		"bob":                      bob.whoCalls(t, false),
		"no token, a session":      b.legacy(t, "2025-11-25").whoCalls(t, false),
		"no token, a modern call":  b.modern(t).whoCalls(t, true),
		"no token, another client": b.legacy(t, "2025-11-25").whoCalls(t, false),
	}
	token := regexp.MustCompile(`^token:[0-9a-f]{16}$`)
	for _, who := range []string{"alice, a session", "bob"} {
		if !token.MatchString(got[who]) {
			t.Errorf("%s: principal %q, want token:<16 hex digits>", who, got[who])
		}
	}
	if got["alice, a session"] != got["alice, another session"] || got["alice, a session"] != got["alice, a modern request"] {
		t.Errorf("one token, three principals: %q, %q, %q", got["alice, a session"], got["alice, another session"], got["alice, a modern request"])
	}
	if got["alice, a session"] == got["bob"] {
		t.Errorf("two tokens, one principal %q", got["bob"])
	}
	session := regexp.MustCompile(`^session:[0-9a-f]{16}$`)
	if s1, s2 := got["no token, a session"], got["no token, another client"]; !session.MatchString(s1) || s1 == s2 {
		t.Errorf("sessions without a token: principals %q and %q, want session:<id>, one each", s1, s2)
	}
	if c := got["no token, a modern call"]; !regexp.MustCompile(`^connection:127\.0\.0\.1:\d+$`).MatchString(c) {
		t.Errorf("a modern request without a token: principal %q, want its connection", c)
	}
	for who, p := range got {
		if regexp.MustCompile(`alice|bob`).MatchString(p) {
			t.Errorf("%s: principal %q shows the token", who, p)
		}
	}
}
