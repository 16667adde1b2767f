package protocol

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

// A tools/call tells the provider who calls: the client as it named
// itself (in initialize, or in the modern era in the request's _meta),
// the session, the transport and the principal (on stdio, the process).
func TestCallsNameTheirClientAndSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type who struct {
			Client               ClientInfo
			SessionID, Transport string
			Principal            Principal
		}
		var mu sync.Mutex
		var got []who
		ft := &fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
			"t_plain": func(_ context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
				mu.Lock()
				got = append(got, who{call.Client(), call.SessionID(), call.Transport(), call.Principal()})
				mu.Unlock()
				return TextResult("ok", false), nil
			},
		}}
		srv := newTestServer(ft)
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_plain"}}`

		legacy := startSession(t, t.Context(), srv, Version20251125)
		legacy.exchange(call) // before initialize: no client yet
		legacy.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"Claude Desktop","version":"0.9.2"}}}`)
		legacy.exchange(call)
		legacy.close()

		modern := startSession(t, t.Context(), srv, Version20260728)
		withInfo := strings.Replace(modernReq("3", "tools/call", `"name":"t_plain"`), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"go-sdk","version":"1.8.0"},`, 1)
		modern.exchange(withInfo)
		modern.exchange(modernReq("4", "tools/call", `"name":"t_plain"`))
		malformed := strings.Replace(modernReq("5", "tools/call", `"name":"t_plain"`), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/clientInfo":"go-sdk",`, 1)
		if out := modern.exchange(malformed); len(out) != 1 || !strings.Contains(out[0], `"result"`) {
			t.Errorf("a malformed clientInfo was answered %q, want the call's result", out)
		}
		modern.close()

		if len(got) != 5 {
			t.Fatalf("%d calls reached the provider, want 5", len(got))
		}
		legacyID, modernID := got[0].SessionID, got[2].SessionID
		if len(legacyID) != 16 || len(modernID) != 16 || legacyID == modernID {
			t.Errorf("session ids %q and %q: want 16 hex digits, one per session", legacyID, modernID)
		}
		process := Principal{Kind: PrincipalProcess}
		want := []who{
			{SessionID: legacyID, Transport: "stdio", Principal: process},
			{Client: ClientInfo{"Claude Desktop", "0.9.2"}, SessionID: legacyID, Transport: "stdio", Principal: process},
			{Client: ClientInfo{"go-sdk", "1.8.0"}, SessionID: modernID, Transport: "stdio", Principal: process},
			{SessionID: modernID, Transport: "stdio", Principal: process},
			{SessionID: modernID, Transport: "stdio", Principal: process},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("what the provider was told (-want +got):\n%s", diff)
		}
	})
}

// A tool set keeps the parameters each tool's clients mirror into
// headers, found by name, out of what clients are sent of the tool.
func TestToolSetsKeepTheirParamHeaders(t *testing.T) {
	region := []ParamHeader{{Name: "Region", Path: []string{"region"}}}
	schema := []byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	ts := NewToolSet([]Tool{
		{Name: "run", InputSchema: schema, ParamHeaders: region},
		{Name: "plain"},
		{Name: "run", InputSchema: schema, ParamHeaders: []ParamHeader{{Name: "Dropped", Path: []string{"x"}}}},
	})
	if diff := cmp.Diff(region, ts.ParamHeaders("run")); diff != "" {
		t.Errorf("run's headers (-want +got):\n%s", diff)
	}
	if ts.ParamHeaders("plain") != nil || ts.ParamHeaders("none") != nil {
		t.Errorf("plain: %v, none: %v; want no headers", ts.ParamHeaders("plain"), ts.ParamHeaders("none"))
	}
	if enc := string(ts.encoded(shapeStructured)[0]); strings.Contains(enc, "ParamHeaders") || !strings.Contains(enc, `"x-mcp-header":"Region"`) {
		t.Errorf("run as clients see it: %s", enc)
	}
	same := NewToolSet([]Tool{{Name: "run", InputSchema: schema, ParamHeaders: region}, {Name: "plain"}})
	other := NewToolSet([]Tool{{Name: "run", InputSchema: schema, ParamHeaders: []ParamHeader{{Name: "Zone", Path: []string{"region"}}}}, {Name: "plain"}})
	if !ts.Equal(same) || ts.Equal(other) {
		t.Errorf("Equal: same %v, other %v; want true, false", ts.Equal(same), ts.Equal(other))
	}
}
