//go:build unix

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// sqlManifest has a tool whose region argument clients mirror into the
// header Mcp-Param-Region over HTTP.
const sqlManifest = `{
  "id": "sql", "name": "SQL",
  "tools": [
    {"name": "sql.run", "description": "Runs a query in a region.",
     "inputSchema": {"type": "object", "properties": {
       "region": {"type": "string", "description": "Where to run it.", "x-mcp-header": "Region"},
       "query": {"type": "string"}}, "required": ["region", "query"]}}
  ],
  "implementation": {"methods": {"sql.run": "sql.run"}}
}`

// A manifest tool with an x-mcp-header is served over HTTP: the Go SDK's
// client mirrors the argument into its header and the call reaches the
// backend; a call whose header disagrees with its body, or lacks it, is
// refused before it does.
func TestParamHeadersOverHTTP(t *testing.T) {
	t.Parallel()
	be := sockettest.NewServer(t, func(_ context.Context, req sockettest.Request) (any, error) {
		var p struct{ Region string }
		_ = json.Unmarshal(req.Params, &p)
		return map[string]any{"ran_in": p.Region}, nil
	})
	dir := manifestDir(t, map[string]string{"sql.json": sqlManifest})
	b := startHTTPBridge(t, dir, be.Path)
	cs := connectHTTP(t, b.url, "2026-07-28", nil)
	ctx := t.Context()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(list); len(names) != 1 || names[0] != "tairseach_sql_run" {
		t.Fatalf("tools %v, want tairseach_sql_run: the client keeps a tool whose x-mcp-header is valid", names)
	}
	for _, region := range []string{"us-west1", "Zürich "} { // the second goes in base64
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_sql_run", Arguments: map[string]any{"region": region, "query": "SELECT 1"}})
		if err != nil || res.IsError || !strings.Contains(textOf(res), `"ran_in":"`+region+`"`) {
			t.Fatalf("call in %q: %v, %s", region, err, textOf(res))
		}
	}
	if n := countMethod(be, "sql.run"); n != 2 {
		t.Fatalf("the backend ran %d calls, want 2", n)
	}

	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tairseach_sql_run","arguments":{"region":"us-west1","query":"SELECT 1"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	header := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tairseach_sql_run"}
	for _, tt := range []struct{ name, region, msg string }{
		{"a header unlike the body", "eu-north1", `Mcp-Param-Region header value \"eu-north1\" does not match body value \"us-west1\" at arguments.region`},
		{"no header", "", `the Mcp-Param-Region header is required`},
	} {
		header["Mcp-Param-Region"] = tt.region
		if tt.region == "" {
			delete(header, "Mcp-Param-Region")
		}
		resp, reply := post(t, http.DefaultClient, b.url, header, body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(reply, `"id":7`) || !strings.Contains(reply, `"code":-32020`) || !strings.Contains(reply, tt.msg) {
			t.Errorf("%s: %d %s, want 400 with error -32020 saying %s", tt.name, resp.StatusCode, reply, tt.msg)
		}
	}
	header["Mcp-Param-Region"] = "us-west1"
	if resp, reply := post(t, http.DefaultClient, b.url, header, body); resp.StatusCode != http.StatusOK || !strings.Contains(reply, `ran_in`) {
		t.Errorf("the same request with its header: %d %s", resp.StatusCode, reply)
	}
	if n := countMethod(be, "sql.run"); n != 3 {
		t.Errorf("the backend ran %d calls, want 3: refused calls must not reach it", n)
	}
}
