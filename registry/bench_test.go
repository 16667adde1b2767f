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
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				res, err := r.CallTool(context.Background(), req)
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
		if vs, err := r.check(b.Context(), schemas.in, args); err != nil || len(vs) > 0 {
			b.Fatal(vs, err)
		}
	}
}
