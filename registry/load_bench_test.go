package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoad1000 measures the first load of 1,000 tools in ten files,
// each tool with a schema of its own (the bench driver's filler tools,
// varied so that nothing can be shared between them): the work between
// the bridge starting and its first tools/list answer.
func BenchmarkLoad1000(b *testing.B) {
	b.Run("compact", func(b *testing.B) { benchLoad1000(b, false) })
	// As people write them, and as manifests-example has them.
	b.Run("indented", func(b *testing.B) { benchLoad1000(b, true) })
}

func benchLoad1000(b *testing.B, indent bool) {
	dir := fillerManifests(b, indent)
	b.ReportAllocs()
	for b.Loop() {
		r := New(Options{Dirs: []string{dir}})
		if n := r.Snapshot().Tools().Len(); n != 1000 {
			b.Fatalf("%d tools, want 1000", n)
		}
	}
}

// BenchmarkViewBuild1000 measures what a client's view of 1,000 tools
// costs to build, once per reload of the manifests and per change of its
// policy: the first request after either pays it.
func BenchmarkViewBuild1000(b *testing.B) {
	r := New(Options{Dirs: []string{fillerManifests(b, false)}})
	v := r.View(&Policy{Client: "a", Filter: Filter{Exclude: []string{"filler9.*"}}})
	policies := []*Policy{{Client: "a", Filter: Filter{Exclude: []string{"filler9.*"}}}, {Client: "a", Filter: Filter{Exclude: []string{"filler8.*"}}}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		v.SetPolicy(policies[i%2])
		i++
		if n := v.Tools().Len(); n != 900 {
			b.Fatalf("%d tools, want 900", n)
		}
	}
}

// fillerManifests writes the thousand tools of the load benchmarks into
// a new folder, compact or indented.
func fillerManifests(b *testing.B, indent bool) string {
	dir := b.TempDir()
	for f := range 10 {
		var tools, methods []string
		for i := f * 100; i < (f+1)*100; i++ {
			name := fmt.Sprintf("filler%d.tool_%04d", f, i)
			tools = append(tools, fmt.Sprintf(`{"name":%q,"title":"Filler %d","description":%q,"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What to search for, in plain words (%d)."},"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"Most results to return."},"since":{"type":"string","format":"date-time"}},"required":["query"]},"annotations":{"readOnlyHint":true}}`,
				name, i, strings.Repeat("Searches the user's items and returns the ones that match. ", 3), i, 100+i))
			methods = append(methods, fmt.Sprintf("%q:\"echo\"", name))
		}
		data := fmt.Sprintf(`{"id":"filler%d","name":"Filler","version":"1.0.0","tools":[%s],"implementation":{"methods":{%s}}}`, f, strings.Join(tools, ","), strings.Join(methods, ","))
		if indent {
			var buf bytes.Buffer
			if err := json.Indent(&buf, []byte(data), "", "  "); err != nil {
				b.Fatal(err)
			}
			data = buf.String()
		}
		writeFile(b, filepath.Join(dir, fmt.Sprintf("filler%02d.json", f)), data)
	}
	return dir
}

// BenchmarkLoad20000 measures the first load of 20,000 manifest files
// of one tool each, as the bench driver's rows of many manifests write
// them.
func BenchmarkLoad20000(b *testing.B) {
	dir := b.TempDir()
	writeMany(b, dir, 20000)
	b.ReportAllocs()
	for b.Loop() {
		if n := New(Options{Dirs: []string{dir}}).Snapshot().Tools().Len(); n != 20000 {
			b.Fatalf("%d tools, want 20000", n)
		}
	}
}

// BenchmarkReloadOneOf20000 measures a reload of 20,000 manifest files
// of one tool each, as the bench driver's rows of many manifests write
// them, after one of them changed.
func BenchmarkReloadOneOf20000(b *testing.B) {
	dir := b.TempDir()
	paths := writeMany(b, dir, 20000)
	r := New(Options{Dirs: []string{dir}})
	b.ReportAllocs()
	gen := 0
	for b.Loop() {
		gen++
		writeFile(b, paths[0], manyManifest(0, gen))
		if s := r.Reload(); s.Tools().Len() != 20000 {
			b.Fatalf("%d tools, want 20000", s.Tools().Len())
		}
	}
}

// writeMany writes n manifest files of one filler tool each into dir and
// returns their paths.
func writeMany(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	paths := make([]string, n)
	for i := range n {
		paths[i] = filepath.Join(dir, fmt.Sprintf("m%05d.json", i))
		writeFile(tb, paths[i], manyManifest(i, 0))
	}
	return paths
}

// manyManifest is a manifest of filler tool i, whose title says gen.
func manyManifest(i, gen int) string {
	name := fmt.Sprintf("many%d.tool", i)
	return fmt.Sprintf(`{"id":%q,"name":"Filler","version":"1.0.0","tools":[{"name":%q,"title":"Filler %d v%d","description":%q,"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What to search for, in plain words (%d)."},"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"Most results to return."},"since":{"type":"string","format":"date-time"}},"required":["query"]},"annotations":{"readOnlyHint":true}}],"implementation":{"methods":{%q:"echo"}}}`,
		name, name, i, gen, strings.Repeat("Searches the user's items and returns the ones that match. ", 3), i, 100+i, name)
}
