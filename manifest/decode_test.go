package manifest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
)

// checkDecodedAsEncodingJSON holds what Parse decoded from data to what
// encoding/json makes of the same tagged structs: the manifest's members,
// and every tool's that is not broken. A manifest or tool that Parse could
// not decode must be one encoding/json cannot decode either.
func checkDecodedAsEncodingJSON(t *testing.T, data []byte, m *Manifest, problems []Problem) {
	t.Helper()
	var raw struct {
		Manifest
		Tools []json.RawMessage `json:"tools"`
	}
	jsonErr := json.Unmarshal(data, &raw)
	for _, p := range problems {
		if strings.HasPrefix(p.Message, "cannot decode manifest") && jsonErr == nil {
			t.Fatalf("%s, but encoding/json decodes it", p.Message)
		}
	}
	if m == nil {
		return
	}
	if jsonErr != nil {
		t.Fatalf("Parse decoded a manifest that encoding/json cannot: %v", jsonErr)
	}
	want, got := raw.Manifest, *m
	want.File, got.Tools = m.File, nil // tools are compared one by one below
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("manifest differs from encoding/json's (-want +got):\n%s", diff)
	}
	if len(raw.Tools) != len(m.Tools) {
		t.Fatalf("%d tools, encoding/json has %d", len(m.Tools), len(raw.Tools))
	}
	undecodable := map[string]bool{}
	for _, p := range problems {
		if strings.HasPrefix(p.Message, "cannot decode tool") {
			undecodable[p.Path] = true
		}
	}
	for i, got := range m.Tools {
		var w Tool
		err := json.Unmarshal(raw.Tools[i], &w)
		if undecodable[got.Path()] {
			if err == nil {
				t.Fatalf("tools[%d] could not be decoded, but encoding/json decodes it", i)
			}
			continue
		}
		if got.Broken {
			continue // broken for a reason of its own: its fields need not be complete
		}
		if err != nil {
			t.Fatalf("tools[%d] served, but encoding/json cannot decode it: %v", i, err)
		}
		if c, err := jsonscan.Compact(w.InputSchema); err == nil {
			w.InputSchema = c
		}
		if c, err := jsonscan.Compact(w.OutputSchema); err == nil {
			w.OutputSchema = c
		}
		type decoded struct {
			Name, Title, Description  string
			InputSchema, OutputSchema string
			Annotations               *Annotations
			MCPExpose, MCPExposeSnake *bool
		}
		members := func(t *Tool) decoded {
			return decoded{t.Name, t.Title, t.Description, string(t.InputSchema), string(t.OutputSchema), t.Annotations, t.MCPExpose, t.MCPExposeSnake}
		}
		if diff := cmp.Diff(members(&w), members(got)); diff != "" {
			t.Fatalf("tools[%d] differs from encoding/json's (-want +got):\n%s", i, diff)
		}
	}
}

func TestDecodedAsEncodingJSON(t *testing.T) {
	var files []string
	for _, root := range []string{"testdata", filepath.Join("..", "manifests-example")} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
	}
	cases := map[string]string{
		"nulls": `{"id":"x","name":null,"requires":null,"tools":[{"name":"a","title":null,"inputSchema":{"type":"object"},"outputSchema":null,"annotations":null,"mcpExpose":null}],"implementation":{"type":null,"methods":{"a":"m","b":null}}}`,
		"repeated unknown members and method names": `{"id":"x","x-a":1,"x-a":{},"tools":[{"name":"a","inputSchema":{"type":"object"},"x-b":1,"x-b":2}],"implementation":{"methods":{"a":"m1","a":"m2"}}}`,
		"escapes":         `{"id":"\u0078","tools":[{"name":"a\u002eb","description":"tab\there \ud83d\ude00","inputSchema":{"type":"object"},"annotations":{"title":"\"q\"","readOnlyHint":false}}],"implementation":{"methods":{"a\u002eb":"m\/n"}}}`,
		"white space":     "{ \"id\" : \"x\" ,\n \"tools\" : [ { \"name\" : \"a\" , \"inputSchema\" : { \"type\" : \"object\" } } ,\n {\"name\":\"b\",\"inputSchema\":{\"type\":\"object\"}} ] , \"requires\" : { \"a\" : [ 1 , 2 ] } }",
		"unknown members": `{"id":"x","extra":{"tools":[]},"tools":[{"name":"a","inputSchema":{"type":"object"},"x-note":"n"}]}`,
		"wrong types":     `{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"},"title":3},{"name":"b","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}},{"name":"c","inputSchema":{"type":"object"}}]}`,
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases[f] = string(data)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases: the test data was not found", len(cases))
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			m, problems := Parse("f.json", []byte(data))
			checkDecodedAsEncodingJSON(t, []byte(data), m, problems)
		})
	}
}

// A known name twice in one object is an error where it is: encoding/json
// would merge the two, the format check sees only the last.
func TestRepeatedNamesAreErrors(t *testing.T) {
	tool := func(members string) string {
		return `{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"}` + members + `},{"name":"b","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a":"ma","b":"mb"}}}`
	}
	for _, tt := range []struct {
		name, data, path string
		file             bool // the whole file is refused, not one tool
	}{
		{"the manifest's id", `{"id":5,"id":"x","tools":[]}`, "id", true},
		{"the manifest's tools", `{"id":"x","tools":[],"tools":[]}`, "tools", true},
		{"implementation's methods", `{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a":"ma"},"methods":{}}}`, "implementation.methods", true},
		{"a tool's schema", tool(`,"inputSchema":{"type":"object"}`), "tools[0].inputSchema", false},
		{"a tool's mcpExpose", tool(`,"mcpExpose":"no","mcpExpose":true`), "tools[0].mcpExpose", false},
		{"an annotation", tool(`,"annotations":{"readOnlyHint":true,"readOnlyHint":false}`), "tools[0].annotations.readOnlyHint", false},
		{"the annotations", tool(`,"annotations":{"readOnlyHint":true},"annotations":{"title":"T"}`), "tools[0].annotations", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("f.json", []byte(tt.data))
			var found *Problem
			for i, p := range problems {
				if p.Severity == Error && p.Path == tt.path && strings.Contains(p.Message, "appears twice") {
					found = &problems[i]
				}
			}
			if found == nil {
				t.Fatalf("no error at %s; problems: %v", tt.path, problems)
			}
			if tt.file {
				if m != nil {
					t.Error("the file was served")
				}
				return
			}
			if m == nil || len(m.Tools) != 2 || !m.Tools[0].Broken || m.Tools[1].Broken || found.Tool != "a" {
				t.Errorf("want tool a broken and tool b served; problem %+v", *found)
			}
		})
	}
}

func ExampleParse_decodedMembers() {
	m, _ := Parse("f.json", []byte(`{"id":"x","tools":[{"name":"a","title":"A","inputSchema":{ "type": "object" },"annotations":{"readOnlyHint":true}}],"implementation":{"methods":{"a":"m"}}}`))
	fmt.Println(m.ID, m.Tools[0].Name, m.Tools[0].Title, string(m.Tools[0].InputSchema), *m.Tools[0].Annotations.ReadOnlyHint, m.Tools[0].Method)
	// Output: x a A {"type":"object"} true m
}

func TestKnownNamesFitTheirSet(t *testing.T) {
	for _, keys := range [][]string{manifestKeys, implKeys, toolKeys, annotationKeys} {
		if len(keys) > 64 {
			t.Errorf("%d names, more than names.seen holds: %v", len(keys), keys)
		}
	}
}
