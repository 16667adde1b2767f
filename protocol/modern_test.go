package protocol

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	modernMeta     = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	modernInfoMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tairseach-mcp","title":"Tairseach","version":"1.2.3"}}`
)

func modernReq(id, method, params string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + modernMeta + `}}`
}

func TestModernRequests(t *testing.T) {
	tests := []struct {
		name, send, want string
	}{
		{"server/discover lists versions and capabilities", modernReq("1", "server/discover", ""),
			`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"logging":{},"tools":{"listChanged":true}},"ttlMs":60000,"cacheScope":"private","resultType":"complete",` + modernInfoMeta + `}}`},
		{"tools/list carries the cache fields", modernReq("2", "tools/list", ""),
			`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t_echo","title":"Echo","description":"Echoes.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"t_plain","description":"Plain.","inputSchema":{"type":"object"}}],"ttlMs":60000,"cacheScope":"private","resultType":"complete",` + modernInfoMeta + `}}`},
		{"tools/call carries resultType", modernReq(`"c"`, "tools/call", `"name":"t_echo","arguments":{"x":"y"}`),
			`{"jsonrpc":"2.0","id":"c","result":{"content":[{"type":"text","text":"{\"x\":\"y\"}"}],"structuredContent":{"x":"y"},"resultType":"complete",` + modernInfoMeta + `}}`},
		{"empty lists carry the cache fields", modernReq("3", "prompts/list", ""),
			`{"jsonrpc":"2.0","id":3,"result":{"prompts":[],"ttlMs":60000,"cacheScope":"private","resultType":"complete",` + modernInfoMeta + `}}`},
		{"resources/read is invalid params", modernReq("4", "resources/read", `"uri":"x:y"`),
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"resource not found: this server offers no resources","data":{"uri":"x:y"}}}`},
		{"ping was removed", modernReq("5", "ping", ""),
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"ping is not part of protocol 2026-07-28"}}`},
		{"logging/setLevel was removed", modernReq("6", "logging/setLevel", `"level":"info"`),
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"logging/setLevel is not part of protocol 2026-07-28"}}`},
		{"an unsupported version gets -32022", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version 2099-01-01","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2099-01-01"}}}`},
		{"missing client capabilities are invalid params", `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"tools/list: _meta[\"io.modelcontextprotocol/clientCapabilities\"] is required and must be an object"}}`},
		{"server/discover without _meta is invalid params", `{"jsonrpc":"2.0","id":9,"method":"server/discover"}`,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"server/discover: _meta[\"io.modelcontextprotocol/protocolVersion\"] is required (protocol 2026-07-28)"}}`},
		{"a bad log level is invalid params", `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"chatty"}}}`,
			`{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"unknown log level \"chatty\" (want one of debug, info, notice, warning, error, critical, alert, emergency)"}}`},
		{"initialize with modern _meta is refused", `{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2026-07-28",` + modernMeta + `}}`,
			`{"jsonrpc":"2.0","id":11,"error":{"code":-32601,"message":"initialize is not part of protocol 2026-07-28"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startClient(t, newTestServer(nil), Version20260728)
			c.send(tt.send)
			c.expect(tt.want)
			if err := c.close(); err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

func TestInitializeAfterModernRequestsIsRefused(t *testing.T) {
	c := startClient(t, newTestServer(nil), Version20260728)
	c.send(modernReq("1", "server/discover", ""))
	c.recv()
	c.send(initLine(2, Version20251125))
	if line := c.recv(); !strings.Contains(line, `"code":-32601`) || !strings.Contains(line, `"supported":["2026-07-28"`) {
		t.Errorf("initialize after a modern request: %s", line)
	}
	c.close()
}

func TestLegacyAndModernClientsShareTheProcess(t *testing.T) {
	c := startClient(t, newTestServer(nil), Version20250618)
	c.send(initLine(1, Version20250618))
	c.recv()
	c.checker.SetVersion(Version20260728)
	c.send(modernReq("2", "tools/call", `"name":"t_plain","arguments":{}`))
	if line := c.recv(); !strings.Contains(line, `"resultType":"complete"`) {
		t.Errorf("modern call: %s", line)
	}
	c.checker.SetVersion(Version20250618)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_plain","arguments":{}}}`)
	c.expect(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}}`)
	c.close()
}

func TestSubscriptionsListen(t *testing.T) {
	srv := newTestServer(nil)
	c := startClient(t, srv, Version20260728)
	c.send(modernReq(`"sub-1"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true,"promptsListChanged":true}`))
	// Only what the server supports is acknowledged.
	c.expect(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"sub-1"}}}`)
	c.send(modernReq("2", "subscriptions/listen", `"notifications":{}`))
	c.expect(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{},"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`)

	// A ping through the session proves both subscriptions are registered.
	c.send(modernReq("3", "tools/list", ""))
	c.recv()
	srv.NotifyToolsChanged()
	c.expect(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub-1"}}}`)

	// Cancelling a stream ends it without a response.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-1"}}`)
	c.send(modernReq("4", "tools/list", ""))
	c.recv()
	srv.NotifyToolsChanged() // sub-1 is gone, stream 2 did not ask: nothing

	// At EOF the open stream gets its final result, then Serve returns.
	c.in.Close()
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2,"io.modelcontextprotocol/serverInfo":{"name":"tairseach-mcp","title":"Tairseach","version":"1.2.3"}}}}`)
	if err := c.close(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// Listen streams never end by themselves, so they take no slot of the
// in-flight limit: calls still run beside them. Their own number is
// bounded.
func TestListenStreamsDoNotStarveCalls(t *testing.T) {
	srv := newTestServer(nil)
	srv.MaxInFlight = 1
	c := startClient(t, srv, Version20260728)
	for i := range maxListens {
		c.send(modernReq(fmt.Sprintf(`"s%d"`, i), "subscriptions/listen", `"notifications":{}`))
		if line := c.recv(); !strings.Contains(line, "notifications/subscriptions/acknowledged") {
			t.Fatalf("stream %d: want its acknowledgement, got %s", i, line)
		}
	}
	c.send(modernReq(`"over"`, "subscriptions/listen", `"notifications":{}`))
	c.expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":"over","error":{"code":-32600,"message":"too many open subscriptions/listen streams (%d); end one first"}}`, maxListens))
	c.send(modernReq("1", "tools/call", `"name":"t_plain","arguments":{"a":1}`))
	if line := c.recv(); !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("want the call's result beside the streams, got %s", line)
	}
	// Ending a stream makes room for another, once the stream has ended
	// (cancelling it does not wait for that).
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s0"}}`)
	for i := 0; ; i++ {
		c.send(modernReq(fmt.Sprintf(`"again%d"`, i), "subscriptions/listen", `"notifications":{}`))
		line := c.recv()
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			break
		}
		if !strings.Contains(line, "too many open") || i == 100 {
			t.Fatalf("want a new stream acknowledged, got %s", line)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.in.Close()
	for range maxListens {
		if line := c.recv(); !strings.Contains(line, `"resultType":"complete"`) {
			t.Fatalf("want each stream's final result, got %s", line)
		}
	}
	if err := c.close(); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestSubscriptionsListenNeedsAFilter(t *testing.T) {
	c := startClient(t, newTestServer(nil), Version20260728)
	c.send(modernReq("1", "subscriptions/listen", ""))
	c.expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"subscriptions/listen: \"notifications\" is required"}}`)
	c.close()
}

func TestClientLogFollowsTheRequestsLevel(t *testing.T) {
	srv := newTestServer(&fakeTools{set: testTools(), call: func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		ClientLog(ctx, LevelDebug, "bridge", "debug detail")
		ClientLog(ctx, LevelWarning, "bridge", "backend slow")
		return TextResult("ok", false), nil
	}})
	c := startClient(t, srv, Version20260728)
	// Without a logLevel, the modern client gets no log messages.
	c.send(modernReq("1", "tools/call", `"name":"t_plain"`))
	if line := c.recv(); !strings.Contains(line, `"id":1`) {
		t.Fatalf("want only the response, got %s", line)
	}
	withLevel := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_plain","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"}}}`
	c.send(withLevel)
	c.expect(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"bridge","data":"backend slow"}}`)
	if line := c.recv(); !strings.Contains(line, `"id":2`) {
		t.Fatalf("want the response, got %s", line)
	}
	c.close()
}
