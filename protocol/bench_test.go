package protocol

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func BenchmarkDecodeMessage(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"groceries","body":"oat milk, bread, apples"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := decodeMessage(line); err != nil {
			b.Fatal(err)
		}
	}
}

func benchToolSet(n int) *ToolSet {
	tools := make([]Tool, n)
	for i := range tools {
		tools[i] = Tool{
			Name:         fmt.Sprintf("tairseach_tool_%04d", i),
			Title:        "Tool",
			Description:  strings.Repeat("Does something useful with the user's data. ", 5),
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"items":{"type":"array"}}}`),
			Annotations:  &ToolAnnotations{ReadOnlyHint: yes()},
		}
	}
	return NewToolSet(tools)
}

func BenchmarkToolsList1000(b *testing.B) {
	ss := newSession(newTestServer(&fakeTools{set: benchToolSet(1000)}), io.Discard)
	rc := &reqContext{version: Version20251125, shape: shapeOf(Version20251125)}
	w := bufio.NewWriterSize(io.Discard, 64<<10)
	ss.listTools(rc, ID("1")) // the first list encodes and caches each tool
	b.ReportAllocs()
	for b.Loop() {
		list, err := ss.listTools(rc, ID("1"))
		if err != nil {
			b.Fatal(err)
		}
		if err := list.writeTo(w); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	ts := benchToolSet(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ts.Lookup("tairseach_tool_0777"); !ok {
			b.Fatal("not found")
		}
	}
}

func BenchmarkEncodeCallResult(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		payload := `{"data":"` + strings.Repeat("x", size) + `"}`
		res := &CallToolResult{Content: []Content{{Type: "text", Text: payload}}, StructuredContent: json.RawMessage(payload)}
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			var buf []byte
			for b.Loop() {
				buf = res.appendJSON(buf[:0], shapeOf(Version20251125))
			}
		})
	}
}

// BenchmarkServe pushes tools/call requests through a whole session:
// read, decode, dispatch to a goroutine, encode, write.
func BenchmarkServe(b *testing.B) {
	srv := newTestServer(&fakeTools{set: testTools(), call: func(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{{Type: "text", Text: `{"ok":true}`}}, StructuredContent: json.RawMessage(`{"ok":true}`)}, nil
	}})
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_plain","arguments":{"title":"groceries"}}}` + "\n"
	var in bytes.Buffer
	for range b.N {
		in.WriteString(line)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := srv.Serve(context.Background(), &in, io.Discard); err != nil {
		b.Fatal(err)
	}
}

// A tool set shares schemas that are compact already and compacts the
// others, so every tool list carries them without white space.
func TestToolSetSharesCompactSchemas(t *testing.T) {
	compact := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	ts := NewToolSet([]Tool{
		{Name: "a", InputSchema: compact},
		{Name: "b", InputSchema: json.RawMessage("{\n  \"type\": \"object\"\n}")},
	})
	tools := ts.Tools()
	if &tools[0].InputSchema[0] != &compact[0] {
		t.Error("a compact schema was copied")
	}
	if got := string(tools[1].InputSchema); got != `{"type":"object"}` {
		t.Errorf("schema = %s, want it compacted", got)
	}
}
