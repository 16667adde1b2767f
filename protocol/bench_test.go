package protocol

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
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
			InputSchema:  jsontext.Value(`{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}`),
			OutputSchema: jsontext.Value(`{"type":"object","properties":{"items":{"type":"array"}}}`),
			Annotations:  &ToolAnnotations{ReadOnlyHint: yes()},
		}
	}
	return NewToolSet(tools)
}

// BenchmarkToolsList1000 answers tools/list of 1,000 tools, from the
// decoded request to the response's bytes, as the reader does.
func BenchmarkToolsList1000(b *testing.B) {
	srv := newTestServer(&fakeTools{set: benchToolSet(1000)})
	ss := srv.NewSession(newOutbox(io.Discard), SessionOptions{})
	info := methods["tools/list"]
	rq := &request{id: jsontext.Value("1"), method: "tools/list", era: era{version: Version20251125}}
	p, _ := info.decode(nil, false)
	b.ReportAllocs()
	for b.Loop() {
		res, err := ss.handle(context.Background(), rq, info, p)
		if err != nil {
			b.Fatal(err)
		}
		if m := ss.encode(rq, info, res, nil); len(m.Bytes()) < 400_000 {
			b.Fatal("short list")
		}
	}
}

func BenchmarkEncodeCallResult(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		payload := `{"data":"` + strings.Repeat("x", size) + `"}`
		res := &callToolResult{CallToolResult: CallToolResult{Content: []Content{{Type: "text", Text: payload}}, StructuredContent: jsontext.Value(payload)}}
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := encodeResult(jsontext.Value("1"), res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkServe pushes tools/call requests through a whole session:
// read, decode, dispatch to a goroutine, encode, write.
func BenchmarkServe(b *testing.B) {
	srv := newTestServer(&fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
		"t_plain": func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{{Type: "text", Text: `{"ok":true}`}}, StructuredContent: jsontext.Value(`{"ok":true}`)}, nil
		},
	}})
	var in bytes.Buffer
	for i := range b.N {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_plain","arguments":{"title":"groceries"}}}`+"\n", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := srv.Serve(context.Background(), &in, io.Discard); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAppendQuoted escapes 1 MiB of text as the text content of a
// large result is escaped: base64 (an attachment), JSON (a result's own
// text, quotes every few bytes) and prose outside ASCII.
func BenchmarkAppendQuoted(b *testing.B) {
	for _, in := range quotedInputs(1 << 20) {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			var dst []byte
			for b.Loop() {
				dst = appendQuoted(dst[:0], in.text)
			}
		})
	}
}

// quotedInputs returns size bytes of each kind of text a result holds.
func quotedInputs(size int) []struct {
	name string
	text []byte
} {
	fill := func(unit string) []byte { return []byte(strings.Repeat(unit, size/len(unit)+1)[:size]) }
	return []struct {
		name string
		text []byte
	}{
		{"base64", fill("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0123456789+/")},
		{"json", fill(`{"id":"n1","title":"groceries","tags":["a","b"],"done":false},`)},
		{"prose", fill("Tá an fhearthainn ag titim ar na sléibhte, agus 🦜 ag canadh.\n")},
	}
}
