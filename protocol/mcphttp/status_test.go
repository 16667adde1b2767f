package mcphttp

import (
	"encoding/base64"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// TestEveryStatusCode sends each kind of request the transport has a rule
// for, by hand, and checks the status, the Content-Type, the JSON-RPC
// error code and the session header of the reply.
func TestEveryStatusCode(t *testing.T) {
	const (
		none   = ""
		json   = "application/json"
		events = "text/event-stream"
	)
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	tests := []struct {
		name    string
		session string // the legacy version to initialize first; "" for none
		method  string // default POST
		body    string
		header  headers
		status  int
		ctype   string
		code    int64 // the JSON-RPC error code, 0 for none
		noID    bool  // a refusal that answers no request of the client's: no "id", as the transport says
	}{
		// The legacy era: sessions.
		{name: "initialize mints a session", body: initialize(1, "2025-11-25"), status: 200, ctype: json},
		{name: "a request without a session id is 400", body: request(2, "tools/list", ""), status: 400, ctype: json, code: -32600},
		{name: "an unknown session id is 404", body: request(2, "tools/list", ""), header: headers{"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"}, status: 404, ctype: json, code: -32600},
		{name: "an unsupported MCP-Protocol-Version is 400", session: "2025-11-25", body: request(2, "tools/list", ""), header: headers{"MCP-Protocol-Version": "1999-01-01"}, status: 400, ctype: json, code: -32022},
		{name: "a notification is 202", session: "2025-11-25", body: notification("notifications/cancelled", `{"requestId":9}`), status: 202, ctype: none},
		{name: "a response from the client is 202", session: "2025-11-25", body: `{"jsonrpc":"2.0","id":"s1","result":{}}`, status: 202, ctype: none},
		{name: "a request is answered as JSON", session: "2025-11-25", body: call(2, "echo", `{"a":1}`), status: 200, ctype: json},
		{name: "an error is answered as JSON with 200", session: "2025-11-25", body: request(2, "no/such", ""), status: 200, ctype: json, code: -32601},
		{name: "a request without a version header is served in the session's", session: "2025-06-18", body: request(2, "tools/list", ""), header: headers{"MCP-Protocol-Version": ""}, status: 200, ctype: json},
		{name: "a batch in 2025-03-26 is answered as one array", session: "2025-03-26", body: "[" + request(2, "ping", "") + "," + call(3, "echo", `{}`) + "]", status: 200, ctype: json},
		{name: "a batch of notifications in 2025-03-26 is 202", session: "2025-03-26", body: "[" + notification("notifications/cancelled", `{"requestId":9}`) + "]", status: 202, ctype: none},
		{name: "an empty batch is 400, with stdio's -32600", session: "2025-03-26", body: "[]", status: 400, ctype: json, code: -32600, noID: true},
		{name: "a batch after 2025-03-26 is 400", session: "2025-11-25", body: "[" + request(2, "ping", "") + "]", status: 400, ctype: json, code: -32600},
		{name: "a batch of notifications after 2025-03-26 is 400", session: "2025-06-18", body: "[" + notification("notifications/cancelled", `{"requestId":9}`) + "]", status: 400, ctype: json, code: -32600},
		{name: "a body that is not JSON is 400", session: "2025-11-25", body: `{"jsonrpc":`, status: 400, ctype: json, code: -32700},
		{name: "a GET without a session id is 400", method: "GET", status: 400, ctype: json, code: -32600},
		{name: "a GET with an unknown session id is 404", method: "GET", header: headers{"Mcp-Session-Id": "nope"}, status: 404, ctype: json, code: -32600},
		{name: "a GET with an unsupported version is 400", session: "2025-11-25", method: "GET", header: headers{"MCP-Protocol-Version": "1999-01-01"}, status: 400, ctype: json, code: -32022},
		{name: "a DELETE without a session id is 400", method: "DELETE", status: 400, ctype: json, code: -32600},
		{name: "a DELETE ends the session", session: "2025-11-25", method: "DELETE", status: 204, ctype: none},
		{name: "a DELETE with an unsupported version is 400", session: "2025-11-25", method: "DELETE", header: headers{"MCP-Protocol-Version": "1999-01-01"}, status: 400, ctype: json, code: -32022},

		// What every POST must carry.
		{name: "Accept without text/event-stream is 406", body: initialize(1, "2025-11-25"), header: headers{"Accept": "application/json"}, status: 406, ctype: json, code: -32600},
		{name: "Accept without application/json is 406", body: initialize(1, "2025-11-25"), header: headers{"Accept": "text/event-stream"}, status: 406, ctype: json, code: -32600},
		{name: "no Accept is 406", body: initialize(1, "2025-11-25"), header: headers{"Accept": ""}, status: 406, ctype: json, code: -32600},
		{name: "Accept */* is enough", body: initialize(1, "2025-11-25"), header: headers{"Accept": "*/*"}, status: 200, ctype: json},
		{name: "a GET whose Accept lacks text/event-stream is 406", session: "2025-11-25", method: "GET", header: headers{"Accept": "application/json"}, status: 406, ctype: json, code: -32600},
		{name: "a body that is not application/json is 415", body: initialize(1, "2025-11-25"), header: headers{"Content-Type": "text/plain"}, status: 415, ctype: json, code: -32600},
		{name: "a body without a Content-Type is 415", body: initialize(1, "2025-11-25"), header: headers{"Content-Type": ""}, status: 415, ctype: json, code: -32600},
		{name: "a charset parameter is fine", body: initialize(1, "2025-11-25"), header: headers{"Content-Type": "application/json; charset=utf-8"}, status: 200, ctype: json},
		{name: "a body over the limit is 413", body: call(1, "echo", `{"x":"`+strings.Repeat("x", 2<<10)+`"}`), status: 413, ctype: json, code: -32600},
		{name: "another method is 405", method: "PUT", body: initialize(1, "2025-11-25"), status: 405, ctype: json, code: -32600},

		// The modern era: no session; headers that mirror the body.
		{name: "a modern request is answered as JSON", body: modern(1, "tools/list", ""), status: 200, ctype: json},
		{name: "a modern tools/call names its tool in Mcp-Name", body: modern(1, "tools/call", `"name":"echo","arguments":{}`), status: 200, ctype: json},
		{name: "Mcp-Name may be base64", body: modern(1, "tools/call", `"name":"naïve","arguments":{}`), header: headers{"Mcp-Name": b64("naïve")}, status: 200, ctype: json},
		{name: "Mcp-Name names a resource's URI", body: modern(1, "resources/read", `"uri":"tairseach://x"`), status: 200, ctype: json, code: -32602},
		{name: "Mcp-Name names a prompt", body: modern(1, "prompts/get", `"name":"p"`), status: 200, ctype: json, code: -32602},
		{name: "a version header unlike the body's is 400", body: modern(1, "tools/list", ""), header: headers{"MCP-Protocol-Version": "2025-11-25"}, status: 400, ctype: json, code: -32020},
		{name: "a missing version header is 400", body: modern(1, "tools/list", ""), header: headers{"MCP-Protocol-Version": ""}, status: 400, ctype: json, code: -32020},
		{name: "a missing Mcp-Method is 400", body: modern(1, "tools/list", ""), header: headers{"Mcp-Method": ""}, status: 400, ctype: json, code: -32020},
		{name: "an Mcp-Method unlike the body's is 400", body: modern(1, "tools/list", ""), header: headers{"Mcp-Method": "tools/call"}, status: 400, ctype: json, code: -32020},
		{name: "a method's case matters", body: modern(1, "tools/list", ""), header: headers{"Mcp-Method": "Tools/List"}, status: 400, ctype: json, code: -32020},
		{name: "a missing Mcp-Name is 400", body: modern(1, "tools/call", `"name":"echo","arguments":{}`), header: headers{"Mcp-Name": ""}, status: 400, ctype: json, code: -32020},
		{name: "an Mcp-Name unlike the body's is 400", body: modern(1, "tools/call", `"name":"echo","arguments":{}`), header: headers{"Mcp-Name": "wait"}, status: 400, ctype: json, code: -32020},
		{name: "a base64 Mcp-Name unlike the body's is 400", body: modern(1, "tools/call", `"name":"echo","arguments":{}`), header: headers{"Mcp-Name": b64("wait")}, status: 400, ctype: json, code: -32020},
		{name: "a broken base64 Mcp-Name is 400", body: modern(1, "tools/call", `"name":"echo","arguments":{}`), header: headers{"Mcp-Name": "=?base64?!!!?="}, status: 400, ctype: json, code: -32020},
		{name: "an Mcp-Name that starts like base64 but does not end so is plain", body: modern(1, "tools/call", `"name":"=?base64?ZWNobw==","arguments":{}`), header: headers{"Mcp-Name": "=?base64?ZWNobw=="}, status: 200, ctype: json, code: -32602},
		{name: "a raw Mcp-Name that is not ASCII is 400", body: modern(1, "tools/call", `"name":"naïve","arguments":{}`), header: headers{"Mcp-Name": "naïve"}, status: 400, ctype: json, code: -32020},
		{name: "an unsupported version is 400", body: strings.ReplaceAll(modern(1, "tools/list", ""), "2026-07-28", "2099-01-01"), header: headers{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, status: 400, ctype: json, code: -32022},
		{name: "an unknown method is 404", body: modern(1, "no/such", ""), status: 404, ctype: json, code: -32601},
		{name: "initialize is no modern method: 404", body: modern(1, "initialize", `"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}`), status: 404, ctype: json, code: -32601},
		{name: "a modern notification is 202", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,` + modernMeta + `}}`, status: 202, ctype: none},
		{name: "a modern batch is 400", body: "[" + modern(1, "tools/list", "") + "]", header: headers{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}, status: 400, ctype: json, code: -32600},
		{name: "a modern request ignores Mcp-Session-Id", body: modern(1, "tools/list", ""), header: headers{"Mcp-Session-Id": "anything"}, status: 200, ctype: json},
		{name: "a modern GET is 405", method: "GET", header: headers{"MCP-Protocol-Version": "2026-07-28"}, status: 405, ctype: json, code: -32600},
		{name: "a modern DELETE is 405", method: "DELETE", header: headers{"MCP-Protocol-Version": "2026-07-28"}, status: 405, ctype: json, code: -32600},
	}
	sessionID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBridge(t, Options{MaxBodySize: 1 << 10}, nil)
			c := b.modern(t)
			if tt.session != "" {
				c = b.legacy(t, tt.session)
			} else if !strings.Contains(tt.body, modernMeta) {
				c.version = "" // a legacy client before initialize
			}
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			r := c.do(method, tt.body, tt.header)
			if r.status != tt.status {
				t.Errorf("status %d, want %d; body %s", r.status, tt.status, r.body)
			}
			if got := mediaType(r.header.Get("Content-Type")); got != tt.ctype {
				t.Errorf("Content-Type %q, want %q", got, tt.ctype)
			}
			if tt.ctype == none && len(r.body) > 0 {
				t.Errorf("a body: %s", r.body)
			}
			if got := r.errorCode(); got != tt.code {
				t.Errorf("error code %d, want %d; body %s", got, tt.code, r.body)
			}
			if tt.noID && r.id() != "" {
				t.Errorf(`want no "id"; body %s`, r.body)
			}
			id := r.header.Get("Mcp-Session-Id")
			minted := strings.Contains(tt.body, `"initialize"`) && tt.status == 200 && tt.session == ""
			switch {
			case minted && !sessionID.MatchString(id):
				t.Errorf("Mcp-Session-Id %q, want 128 bits in hex", id)
			case !minted && id != "" && id != c.session:
				t.Errorf("Mcp-Session-Id %q on a reply that mints none", id)
			case tt.status == 405 && r.header.Get("Allow") == "":
				t.Error("405 without Allow")
			}
		})
	}
}

// A session ended by DELETE, or never made by a failed initialize, is
// 404 to every later request.
func TestEndedSessionsAre404(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.legacy(t, "2025-11-25")
	if r := c.do(http.MethodDelete, ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if method == http.MethodPost {
			body = request(3, "tools/list", "")
		}
		if r := c.do(method, body); r.status != http.StatusNotFound {
			t.Errorf("%s after DELETE: %d %s", method, r.status, r.body)
		}
	}

	// initialize without its protocolVersion fails: no session is made.
	c = b.modern(t)
	c.version = ""
	r := c.post(request(1, "initialize", `{"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`))
	if r.status != http.StatusOK || r.errorCode() != protocol.CodeInvalidParams {
		t.Fatalf("a bad initialize: %d %s", r.status, r.body)
	}
	if id := r.header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("a failed initialize minted session %s", id)
	}
	if n := b.h.Sessions(); n != 0 {
		t.Errorf("%d sessions open after a failed initialize", n)
	}
}

// A short JSON response says its length (escapes counted); a large
// result is streamed in chunks instead of gathered into one buffer.
func TestAJSONResponseSaysItsLengthUnlessLarge(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		body   string
		length bool // a Content-Length header
	}{
		{"a short result", modern(1, "tools/call", `"name":"echo","arguments":{"a":1}`), true},
		{"a short result with escapes", modern(1, "tools/call", `"name":"echo","arguments":{"q":"\"\n\\\u0001 ü"}`), true},
		{"an error", modern(1, "tools/call", `"name":"nope","arguments":{}`), true},
		{"a result just under the line", modern(1, "tools/call", `"name":"big","arguments":{"n":60000}`), true},
		{"a result of 1 MiB", modern(1, "tools/call", `"name":"big","arguments":{"n":1048576}`), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newBridge(t, Options{}, nil).modern(t).post(tt.body)
			if r.status != http.StatusOK {
				t.Fatalf("HTTP %d: %.200s", r.status, r.body)
			}
			cl := r.header.Get("Content-Length")
			switch {
			case tt.length && cl != strconv.Itoa(len(r.body)):
				t.Errorf("Content-Length %q for a body of %d bytes", cl, len(r.body))
			case !tt.length && cl != "":
				t.Errorf("Content-Length %q on a streamed result of %d bytes", cl, len(r.body))
			}
			if !jsontext.Value(r.body).IsValid() {
				t.Errorf("the body is not JSON: %.200s", r.body)
			}
		})
	}
}
