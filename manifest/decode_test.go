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
		"nulls":            `{"id":"x","name":null,"requires":null,"tools":[{"name":"a","title":null,"inputSchema":{"type":"object"},"outputSchema":null,"annotations":null,"mcpExpose":null}],"implementation":{"type":null,"methods":{"a":"m","b":null}}}`,
		"repeated members": `{"id":"x","id":"y","tools":[{"name":"a","inputSchema":{"type":"string"},"inputSchema":{"type":"object"}}],"tools":[{"name":"b","inputSchema":{"type":"object","properties":{"x":{"type":"integer"}}}}]}`,
		"escapes":          `{"id":"\u0078","tools":[{"name":"a\u002eb","description":"tab\there \ud83d\ude00","inputSchema":{"type":"object"},"annotations":{"title":"\"q\"","readOnlyHint":false}}],"implementation":{"methods":{"a\u002eb":"m\/n"}}}`,
		"white space":      "{ \"id\" : \"x\" ,\n \"tools\" : [ { \"name\" : \"a\" , \"inputSchema\" : { \"type\" : \"object\" } } ,\n {\"name\":\"b\",\"inputSchema\":{\"type\":\"object\"}} ] , \"requires\" : { \"a\" : [ 1 , 2 ] } }",
		"unknown members":  `{"id":"x","extra":{"tools":[]},"tools":[{"name":"a","inputSchema":{"type":"object"},"x-note":"n"}]}`,
		"wrong types":      `{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"},"title":3},{"name":"b","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}},{"name":"c","inputSchema":{"type":"object"}}]}`,
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

func ExampleParse_decodedMembers() {
	m, _ := Parse("f.json", []byte(`{"id":"x","tools":[{"name":"a","title":"A","inputSchema":{ "type": "object" },"annotations":{"readOnlyHint":true}}],"implementation":{"methods":{"a":"m"}}}`))
	fmt.Println(m.ID, m.Tools[0].Name, m.Tools[0].Title, string(m.Tools[0].InputSchema), *m.Tools[0].Annotations.ReadOnlyHint, m.Tools[0].Method)
	// Output: x a A {"type":"object"} true m
}
