package mcphttp

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A 2026-07-28 request must carry its protocol version and the client's
// capabilities in _meta; one that does not is malformed: -32602 Invalid
// params, and on HTTP 400 Bad Request (basic/index, per-request protocol
// fields). A header that disagrees with a value the body does carry is
// -32020 HeaderMismatch instead.
func TestAModernRequestWithMalformedMetaIsBadRequest(t *testing.T) {
	const (
		version = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		caps    = `"io.modelcontextprotocol/clientCapabilities":{}`
	)
	withMeta := func(meta string) string { return request(7, "tools/list", `{"_meta":{`+meta+`}}`) }
	for _, tt := range []struct {
		name   string
		body   string
		status int
		code   int64 // 0: a result
	}{
		{"a request without _meta", request(7, "tools/list", `{}`), 400, -32602},
		{"a request whose _meta lacks the protocol version", withMeta(caps), 400, -32602},
		{"a request whose _meta lacks the client's capabilities", withMeta(version), 400, -32602},
		{"a request whose client capabilities are not an object", withMeta(version + `,"io.modelcontextprotocol/clientCapabilities":[]`), 400, -32602},
		{"a request with an unknown log level", withMeta(version + "," + caps + `,"io.modelcontextprotocol/logLevel":"loud"`), 400, -32602},
		{"a request whose _meta names another version than the header", withMeta(`"io.modelcontextprotocol/protocolVersion":"2025-11-25",` + caps), 400, -32020},
		{"a well-formed request", withMeta(version + "," + caps), 200, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newBridge(t, Options{}, nil).modern(t)
			r := c.post(tt.body, headers{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
			if got := r.errorCode(); r.status != tt.status || got != tt.code {
				t.Errorf("HTTP %d, code %d; want HTTP %d, code %d; body %s", r.status, got, tt.status, tt.code, r.body)
			}
			var resp struct {
				ID jsontext.Value `json:"id"`
			}
			if err := json.Unmarshal(r.body, &resp); err != nil || string(resp.ID) != "7" {
				t.Errorf("the reply's id is %s (%v), want the request's, 7", resp.ID, err)
			}
		})
	}
}
