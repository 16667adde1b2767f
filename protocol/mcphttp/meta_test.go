package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// noTools is a tool provider with no tools.
type noTools struct{}

func (noTools) Tools() *protocol.ToolSet { return protocol.NewToolSet(nil) }

func (noTools) CallTool(context.Context, *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return nil, errors.New("no tools")
}

// A 2026-07-28 request must carry its protocol version and the client's
// capabilities in _meta; one that does not is malformed: -32602 Invalid
// params, and on HTTP 400 Bad Request (basic/index, per-request protocol
// fields). A header that disagrees with a value the body does carry is
// -32020 HeaderMismatch instead.
func TestAModernRequestWithMalformedMetaIsBadRequest(t *testing.T) {
	t.Parallel()
	h := NewHandler(&protocol.Server{Info: protocol.Implementation{Name: "test", Version: "1"}, Tools: noTools{}}, Options{})
	t.Cleanup(func() { h.Shutdown(context.Background()) })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	const caps = `"io.modelcontextprotocol/clientCapabilities":{}`
	const version = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	for _, tt := range []struct {
		name   string
		meta   string // params._meta, or "" for none
		status int
		code   int64 // 0: a result
	}{
		{"a request without _meta", ``, 400, protocol.CodeInvalidParams},
		{"a request whose _meta lacks the protocol version", `{` + caps + `}`, 400, protocol.CodeInvalidParams},
		{"a request whose _meta lacks the client's capabilities", `{` + version + `}`, 400, protocol.CodeInvalidParams},
		{"a request whose client capabilities are not an object", `{` + version + `,"io.modelcontextprotocol/clientCapabilities":[]}`, 400, protocol.CodeInvalidParams},
		{"a request with an unknown log level", `{` + version + `,` + caps + `,"io.modelcontextprotocol/logLevel":"loud"}`, 400, protocol.CodeInvalidParams},
		{"a request whose _meta names another version than the header", `{"io.modelcontextprotocol/protocolVersion":"2025-11-25",` + caps + `}`, 400, protocol.CodeHeaderMismatch},
		{"a well-formed request", `{` + version + `,` + caps + `}`, 200, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			params := `{}`
			if tt.meta != "" {
				params = `{"_meta":` + tt.meta + `}`
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+Path,
				strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":`+params+`}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/list")
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body struct {
				ID    json.RawMessage `json:"id"`
				Error *protocol.Error `json:"error"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			var code int64
			if body.Error != nil {
				code = body.Error.Code
			}
			if res.StatusCode != tt.status || code != tt.code {
				t.Errorf("HTTP %d, code %d (%+v); want HTTP %d, code %d", res.StatusCode, code, body.Error, tt.status, tt.code)
			}
			if string(body.ID) != "7" {
				t.Errorf("the response's id is %s, want the request's, 7", body.ID)
			}
		})
	}
}
