package protocol

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// BenchmarkServeModern is BenchmarkServe in protocol 2026-07-28: each
// tools/call carries its version and the client's capabilities in _meta.
// A call that does not become a task must cost what it did before tasks.
func BenchmarkServeModern(b *testing.B) {
	srv := newTestServer(&fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
		"t_plain": func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{{Type: "text", Text: `{"ok":true}`}}, StructuredContent: jsontext.Value(`{"ok":true}`)}, nil
		},
	}})
	var in bytes.Buffer
	for i := range b.N {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_plain","arguments":{"title":"groceries"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`+"\n", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := srv.Serve(context.Background(), &in, io.Discard); err != nil {
		b.Fatal(err)
	}
}
