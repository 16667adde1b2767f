package registry

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/socketclient"
	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

const benchManifest = `{"id":"bench","tools":[{"name":"bench.echo","description":"Echo.","inputSchema":{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}}],"implementation":{"methods":{"bench.echo":"echo"}}}`

// BenchmarkCallTool measures one tools/call through the registry and the
// socket client, against an echoing backend.
func BenchmarkCallTool(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			s := sockettest.NewServer(b, sockettest.Echo)
			dir := b.TempDir()
			writeFile(b, filepath.Join(dir, "b.json"), benchManifest)
			be := socketclient.New(s.Path, nil)
			defer be.Close()
			r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be})
			args := jsontext.Value(`{"data":"` + strings.Repeat("x", size-11) + `"}`)
			req := &protocol.CallToolRequest{Name: "t_bench_echo", Arguments: jsontext.Value(args)}
			call := aCall()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				res, err := r.CallTool(context.Background(), call, req)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkValidateArguments measures the argument check alone.
func BenchmarkValidateArguments(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, filepath.Join(dir, "b.json"), benchManifest)
	r := New(Options{Dirs: []string{dir}, Prefix: "t"})
	e, _ := r.Snapshot().Lookup("t_bench_echo")
	schemas, err := e.schemas()
	if err != nil {
		b.Fatal(err)
	}
	args := jsontext.Value(`{"data":"` + strings.Repeat("x", 89) + `"}`)
	b.ReportAllocs()
	for b.Loop() {
		if vs, err := schemas.in.Check(b.Context(), r.decoder, args); err != nil || len(vs) > 0 {
			b.Fatal(vs, err)
		}
	}
}

// typicalManifest has a tool whose schema is like most real ones: a few
// typed properties, bounds, an enum, a format and a small nested array.
const typicalManifest = `{"id":"bench","tools":[{"name":"bench.search","description":"Search.","inputSchema":{"type":"object","properties":{
 "query":{"type":"string","minLength":1,"description":"What to search for."},
 "limit":{"type":"integer","minimum":1,"maximum":100},
 "since":{"type":"string","format":"date-time"},
 "sort":{"type":"string","enum":["newest","oldest","relevance"]},
 "labels":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"color":{"type":"string"}},"required":["name"]}}},
 "required":["query"],"additionalProperties":false}}],"implementation":{"methods":{"bench.search":"search"}}}`

// BenchmarkCheckTypicalArguments measures a call's work before the
// backend is called, mostly the argument check, for a small object
// against a typical tool schema (no backend is configured, so the call
// ends there).
func BenchmarkCheckTypicalArguments(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, filepath.Join(dir, "b.json"), typicalManifest)
	r := New(Options{Dirs: []string{dir}, Prefix: "t"})
	req := &protocol.CallToolRequest{Name: "t_bench_search", Arguments: jsontext.Value(
		`{"query":"invoices from acme","limit":20,"since":"2024-01-01T00:00:00Z","sort":"newest","labels":[{"name":"work","color":"blue"},{"name":"billing"}]}`)}
	call := aCall()
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.CallTool(b.Context(), call, req)
		if err != nil || !strings.HasPrefix(res.Content[0].Text, "No backend") {
			b.Fatal(err, res)
		}
	}
}
