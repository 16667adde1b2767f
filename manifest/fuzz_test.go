package manifest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodManifest))
	f.Add([]byte(`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object","properties":{"n":{"$ref":"#/$defs/x"}}}}]}`))
	f.Add([]byte(`{"id":"x","tools":[{"name":"a","inputSchema":{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}}]}`))
	f.Add([]byte(`{"id":"x","tools":[1,{"name":2},null]}`))
	f.Add([]byte(`[[[[[[[[[[`))
	// Repeated names, in the manifest and in a tool.
	f.Add([]byte(`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a":"ma"},"methods":{}}}`))
	f.Add([]byte(`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"},"mcpExpose":"no","mcpExpose":true,"annotations":{"readOnlyHint":true},"annotations":{"title":"T"}}]}`))
	f.Add([]byte(`{"id":"x","tools":[],"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	f.Add([]byte("{\"id\":\"x\",\"tools\":[{\"name\":\"a\",\"description\":\"\xff\",\"inputSchema\":{\"type\":\"object\"}},\n {\"name\":\"b\",\"inputSchema\":{ \"type\" : \"object\" }}],\"implementation\":{\"methods\":{\"a\":\"a\",\"b\":\"b\"}}}"))
	f.Add([]byte(contentManifest(`,{"uri":"a:b","name":"n","file":"f","text":"t"}`, `,{"uriTemplate":"a:{x}{y}","name":"n","method":"m"}`, `,{"name":"p","messages":[{"role":"user","resource":"a:{x}"}]}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, problems := Parse("f.json", data)
		if m == nil && !HasErrors(problems) {
			t.Fatalf("nil manifest without an error problem")
		}
		for _, p := range problems {
			if p.File != "f.json" || p.Message == "" {
				t.Fatalf("problem without a file or a message: %+v", p)
			}
			if p.Tool != "" && !strings.HasPrefix(p.Path, "tools[") ||
				p.Resource != "" && !strings.HasPrefix(p.Path, "resources[") && !strings.HasPrefix(p.Path, "resourceTemplates[") ||
				p.Prompt != "" && !strings.HasPrefix(p.Path, "prompts[") {
				t.Fatalf("problem about an item with no path into it: %+v", p)
			}
		}
		if m == nil {
			return
		}
		var paths []string
		for i, r := range m.Resources {
			if r.Index != i {
				t.Fatalf("resources[%d] has index %d", i, r.Index)
			}
			if r.Broken {
				paths = append(paths, r.Path())
			} else if sources := btoi(r.Method != "") + btoi(r.File != "") + btoi(r.Text != nil); r.URI == "" || sources != 1 {
				t.Fatalf("%s served without a URI or without exactly one source: %+v", r.Path(), r)
			}
		}
		for _, tpl := range m.ResourceTemplates {
			if tpl.Broken {
				paths = append(paths, tpl.Path())
			} else if tpl.Template == nil || tpl.Template.String() != tpl.URITemplate {
				t.Fatalf("%s served without its parsed template", tpl.Path())
			}
		}
		for _, pr := range m.Prompts {
			if pr.Broken {
				paths = append(paths, pr.Path())
			} else if len(pr.Messages) == 0 {
				t.Fatalf("%s served without messages", pr.Path())
			}
		}
		for _, path := range paths {
			if !hasErrorAt(problems, path) {
				t.Fatalf("%s is broken, but no error says why:\n%s", path, joinProblems(problems))
			}
		}
		doc, _ := decodeValue(data) // nil unless the whole file is strict JSON
		docTools, _ := m2(doc)["tools"].([]any)
		for i, tool := range m.Tools {
			if tool.Index != i {
				t.Fatalf("tools[%d] has index %d", i, tool.Index)
			}
			if tool.Broken {
				if !hasErrorAt(problems, tool.Path()) {
					t.Fatalf("%s is broken, but no error says why:\n%s", tool.Path(), joinProblems(problems))
				}
				continue
			}
			for _, s := range []jsontext.Value{tool.InputSchema, tool.OutputSchema} {
				c := s.Clone()
				if err := c.Compact(); s != nil && (err != nil || !bytes.Equal(c, s) || bytes.ContainsAny(s, "\r\n")) {
					t.Fatalf("%s: a schema is not compact: %q", tool.Path(), s)
				}
			}
			if in, _, err := CompileSchemas(tool); tool.Servable() && (in == nil || err != nil) {
				t.Fatalf("servable tool %q whose schemas do not compile: %v", tool.Name, err)
			}
			if docTools == nil {
				continue
			}
			// What is served is what the file says.
			want := m2(docTools[i])
			in, err := decodeValue(tool.InputSchema)
			if err != nil || want["name"] != tool.Name || !cmp.Equal(want["inputSchema"], in) {
				t.Fatalf("%s is served as %q with %s (%v); the file says %v", tool.Path(), tool.Name, tool.InputSchema, err, want)
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func m2(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// hasErrorAt reports whether an error problem is at path or inside it.
func hasErrorAt(problems []Problem, path string) bool {
	for _, p := range problems {
		if rest, ok := strings.CutPrefix(p.Path, path); ok && p.Severity == Error && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return true
		}
	}
	return false
}
