package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoad1000 measures Load of 1,000 tools in ten files, each tool
// with a schema of its own (the bench driver's filler tools, varied so
// that nothing can be shared between them): the manifest part of the work
// between the bridge starting and its first tools/list answer.
func BenchmarkLoad1000(b *testing.B) {
	b.Run("compact", func(b *testing.B) { benchLoad1000(b, false) })
	// As people write them, and as manifests-example has them.
	b.Run("indented", func(b *testing.B) { benchLoad1000(b, true) })
}

func benchLoad1000(b *testing.B, indent bool) {
	dir := b.TempDir()
	for f := range 10 {
		var tools, methods []string
		for i := f * 100; i < (f+1)*100; i++ {
			name := fmt.Sprintf("filler%d.tool_%04d", f, i)
			tools = append(tools, fmt.Sprintf(`{"name":%q,"title":"Filler %d","description":%q,"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What to search for, in plain words (%d)."},"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"Most results to return."},"since":{"type":"string","format":"date-time"}},"required":["query"]},"annotations":{"readOnlyHint":true}}`,
				name, i, strings.Repeat("Searches the user's items and returns the ones that match. ", 3), i, 100+i))
			methods = append(methods, fmt.Sprintf("%q:\"echo\"", name))
		}
		data := []byte(fmt.Sprintf(`{"id":"filler%d","name":"Filler","version":"1.0.0","tools":[%s],"implementation":{"methods":{%s}}}`, f, strings.Join(tools, ","), strings.Join(methods, ",")))
		if indent {
			var buf bytes.Buffer
			if err := json.Indent(&buf, data, "", "  "); err != nil {
				b.Fatal(err)
			}
			data = buf.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("filler%02d.json", f)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		ms, problems := Load(dir)
		if len(ms) != 10 || len(problems) != 0 {
			b.Fatalf("%d manifests, problems: %v", len(ms), problems)
		}
	}
}
