package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const goodManifest = `{
  "id": "notes", "name": "Notes", "version": "1.0.0", "manifest_version": "1.0",
  "tools": [
    {"name": "notes.list", "description": "List notes.", "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1}}},
     "outputSchema": {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]},
     "annotations": {"readOnlyHint": true}},
    {"name": "notes.create", "description": "Create a note.", "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}, "mcp_expose": true},
    {"name": "notes.hidden", "description": "Hidden.", "inputSchema": {"type": "object"}, "mcpExpose": false}
  ],
  "implementation": {"type": "internal", "methods": {"notes.list": "notes.list", "notes.create": "notes.create", "notes.hidden": "notes.hidden"}}
}`

func TestParseGoodManifest(t *testing.T) {
	m, problems := Parse("notes.json", []byte(goodManifest))
	if m == nil {
		t.Fatalf("Parse returned nil; problems: %v", problems)
	}
	if len(problems) != 0 {
		t.Errorf("problems = %v, want none", problems)
	}
	if got := len(m.Tools); got != 3 {
		t.Fatalf("len(Tools) = %d, want 3", got)
	}
	list, create, hidden := m.Tools[0], m.Tools[1], m.Tools[2]
	if in, out, err := CompileSchemas(list); !list.Servable() || list.Method != "notes.list" || in == nil || out == nil || err != nil {
		t.Errorf("notes.list = %+v, want servable with compiled schemas (%v)", list, err)
	}
	if list.Annotations == nil || list.Annotations.ReadOnlyHint == nil || !*list.Annotations.ReadOnlyHint {
		t.Errorf("notes.list annotations = %+v", list.Annotations)
	}
	if !create.Servable() {
		t.Errorf("mcp_expose: true tool not servable")
	}
	if hidden.Exposed() || hidden.Servable() {
		t.Errorf("mcpExpose: false tool is exposed")
	}
	createIn, _, _ := CompileSchemas(create)
	if vs, err := createIn.Check(t.Context(), defaultDecoder, []byte(`{"title": 3}`)); len(vs) == 0 || err != nil {
		t.Errorf("compiled input schema accepted a number title (%v)", err)
	}
}

func TestParseProblems(t *testing.T) {
	tool := func(fields string) string {
		return `{"id":"x","tools":[{"name":"a","description":"A.","inputSchema":{"type":"object"}},` + fields + `],"implementation":{"methods":{"a":"a","b":"b"}}}`
	}
	tests := []struct {
		name     string
		data     string
		wantNil  bool     // the whole file is skipped
		broken   []string // tools marked broken
		problems []string // substrings of Problem.String(), in order
	}{
		{name: "invalid JSON is reported with line and column", data: "{\n  \"id\": \"x\",\n  oops\n}", wantNil: true,
			problems: []string{"m.json: error: invalid JSON: line 3, column 3"}},
		{name: "an empty file is invalid JSON", data: "", wantNil: true, problems: []string{"invalid JSON"}},
		{name: "trailing data is invalid JSON", data: `{"id":"x","tools":[]} {}`, wantNil: true, problems: []string{"invalid JSON"}},
		{name: "a top-level array is rejected", data: `[]`, wantNil: true, problems: []string{"must be a JSON object, not an array"}},
		{name: "missing id skips the file", data: `{"tools":[]}`, wantNil: true, problems: []string{"m.json: error: missing properties: 'id'"}},
		{name: "missing tools skips the file", data: `{"id":"x"}`, wantNil: true, problems: []string{"missing properties: 'tools'"}},
		{name: "wrong top-level type skips the file", data: `{"id":"x","tools":[],"version":3}`, wantNil: true, problems: []string{"m.json:version: error: expected string, but got number"}},
		{name: "a method that is not a string skips the file", data: `{"id":"x","tools":[],"implementation":{"methods":{"a":1}}}`, wantNil: true, problems: []string{"implementation.methods.a: error: expected string"}},
		{name: "a tool without inputSchema is broken, others serve", data: tool(`{"name":"b","description":"B."}`), broken: []string{"b"},
			problems: []string{"m.json:tools[1]: error: missing properties: 'inputSchema'"}},
		{name: "inputSchema without type object is broken", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"string"}}`), broken: []string{"b"},
			problems: []string{"tools[1].inputSchema.type: error:"}},
		{name: "inputSchema with no type is broken", data: tool(`{"name":"b","description":"B.","inputSchema":{"properties":{}}}`), broken: []string{"b"},
			problems: []string{"tools[1].inputSchema: error: missing properties: 'type'"}},
		{name: "outputSchema must be an object schema", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object"},"outputSchema":{"type":"array"}}`), broken: []string{"b"},
			problems: []string{"tools[1].outputSchema.type: error:"}},
		{name: "a wrongly typed annotation breaks the tool", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}}`), broken: []string{"b"},
			problems: []string{"tools[1].annotations.readOnlyHint: error: expected boolean"}},
		{name: "a schema that does not compile breaks the tool", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":"one"}}}}`), broken: []string{"b"},
			problems: []string{"tools[1].inputSchema: error: schema does not compile"}},
		{name: "a remote $ref is refused, not loaded", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object","properties":{"n":{"$ref":"https://example.com/s.json"}}}}`), broken: []string{"b"},
			problems: []string{"tools[1].inputSchema: error: schema does not compile"}},
		{name: "a file $ref is refused, not read", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object","properties":{"n":{"$ref":"/etc/passwd"}}}}`), broken: []string{"b"},
			problems: []string{"schema does not compile"}},
		{name: "a local $ref compiles", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/n"}}}}`)},
		{name: "a duplicate tool name is an error on the second", data: tool(`{"name":"a","description":"A again.","inputSchema":{"type":"object"}}`), broken: []string{"a"},
			problems: []string{`tools[1].name: error: duplicate tool name "a" (first declared at tools[0])`, `implementation.methods.b: warning: method mapping for "b", but no tool has that name`}},
		{name: "a tool without a method mapping is a warning", data: tool(`{"name":"c","description":"C.","inputSchema":{"type":"object"}}`),
			problems: []string{"tools[1]: warning: no method mapping", `implementation.methods.b: warning`}},
		{name: "an empty description is a warning", data: tool(`{"name":"b","inputSchema":{"type":"object"}}`),
			problems: []string{"tools[1].description: warning: empty description"}},
		{name: "a top-level oneOf is a warning", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object","oneOf":[{"required":["x"]},{"required":["y"]}]}}`),
			problems: []string{"tools[1].inputSchema.oneOf: warning: top-level oneOf"}},
		{name: "a top-level anyOf and allOf are warnings", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object","anyOf":[{"required":["x"]}],"allOf":[{}]}}`),
			problems: []string{"tools[1].inputSchema.anyOf: warning: top-level anyOf", "tools[1].inputSchema.allOf: warning: top-level allOf"}},
		{name: "huge schemas are a warning", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object","description":"` + strings.Repeat("x", maxSchemaLen) + `"}}`),
			problems: []string{"tools[1]: warning: schemas are 32802 bytes; over 32768"}},
		{name: "the schema size counts the compact form", data: tool(`{"name":"b","description":"B.","inputSchema":{"type":"object"` + strings.Repeat(" ", maxSchemaLen) + `}}`)},
		{name: "a huge description is a warning", data: tool(`{"name":"b","description":"` + strings.Repeat("x", maxDescriptionLen+1) + `","inputSchema":{"type":"object"}}`),
			problems: []string{"tools[1].description: warning: description is"}},
		{name: "hidden tools are not linted", data: tool(`{"name":"c","inputSchema":{"type":"object"},"mcpExpose":false}`),
			problems: []string{"implementation.methods.b: warning"}},
		{name: "$schema draft-07 is honoured", data: tool(`{"name":"b","description":"B.","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"n":{"type":"integer"}},"properties":{"n":{"$ref":"#/definitions/n"}}}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("m.json", []byte(tt.data))
			if (m == nil) != tt.wantNil {
				t.Fatalf("Parse() nil = %v, want %v; problems: %v", m == nil, tt.wantNil, problems)
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(tt.problems), joinProblems(problems))
			}
			for i, want := range tt.problems {
				if got := problems[i].String(); !strings.Contains(got, want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got, want)
				}
			}
			if m == nil {
				return
			}
			var broken []string
			for _, tool := range m.Tools {
				if tool.Broken {
					broken = append(broken, tool.Name)
				}
			}
			if strings.Join(broken, ",") != strings.Join(tt.broken, ",") {
				t.Errorf("broken tools = %v, want %v", broken, tt.broken)
			}
			if !m.Tools[0].Servable() {
				t.Errorf("tool a is not servable, but its problems are elsewhere")
			}
		})
	}
}

func TestParseRefusesAFileOverTheLimit(t *testing.T) {
	data := make([]byte, MaxFileSize+1)
	m, problems := Parse("m.json", data)
	if m != nil || len(problems) != 1 || problems[0].String() != "m.json: error: file is 8388609 bytes, more than the 8388608 allowed" {
		t.Errorf("Parse = %v, %v", m, problems)
	}
}

func TestLoadWalksFoldersInOrderAndSkipsHidden(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.json", goodManifest)
	write("a/nested/deep.json", strings.Replace(goodManifest, `"notes"`, `"deep"`, 1))
	write(".hidden.json", "not json")
	write(".git/config.json", "not json")
	write("notes.txt", "not a manifest")
	write("broken.json", "{")

	ms, problems := Load(dir, filepath.Join(dir, "missing"))
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	if got, want := strings.Join(ids, ","), "deep,notes"; got != want {
		t.Errorf("manifest ids = %s, want %s", got, want)
	}
	if len(problems) != 2 {
		t.Fatalf("problems:\n%s\nwant one for broken.json and one for the missing folder", joinProblems(problems))
	}
	if !strings.Contains(problems[0].String(), "missing: warning: manifest folder does not exist") {
		t.Errorf("problem 0 = %s", problems[0])
	}
	if !strings.Contains(problems[1].String(), "broken.json: error: invalid JSON") {
		t.Errorf("problem 1 = %s", problems[1])
	}
}

func TestSchemaFileIsTheOneTheLoaderUses(t *testing.T) {
	onDisk, err := os.ReadFile("manifest.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(onDisk) != string(SchemaJSON) {
		t.Fatal("manifest.schema.json differs from the embedded schema")
	}
	// Every field the loader decodes is declared in the schema, so editors
	// offer and check exactly what the bridge reads.
	var schema struct {
		Properties map[string]any `json:"properties"`
		Defs       struct {
			Tool struct {
				Properties map[string]any `json:"properties"`
			} `json:"tool"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON, &schema); err != nil {
		t.Fatal(err)
	}
	for _, f := range jsonFields(Manifest{}) {
		if _, ok := schema.Properties[f]; !ok {
			t.Errorf("manifest field %q is decoded but not in the schema", f)
		}
	}
	if _, ok := schema.Properties["tools"]; !ok {
		t.Error("schema lacks tools")
	}
	for _, f := range jsonFields(Tool{}) {
		if _, ok := schema.Defs.Tool.Properties[f]; !ok {
			t.Errorf("tool field %q is decoded but not in the schema", f)
		}
	}
	for f := range schema.Defs.Tool.Properties {
		found := false
		for _, g := range jsonFields(Tool{}) {
			found = found || f == g
		}
		if !found {
			t.Errorf("schema declares tool field %q the loader ignores", f)
		}
	}
}

func TestViolationsNamePaths(t *testing.T) {
	s, _, err := CompileSchemas(&Tool{InputSchema: []byte(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","required":["name"]}}},"required":["q"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Check(t.Context(), defaultDecoder, []byte(`{"items":[{"name":"a"},{}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Path()+": "+v.Message)
	}
	want := []string{": missing properties: 'q'", "items[1]: missing properties: 'name'"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("violations = %q, want %q", got, want)
	}
}

// jsonFields lists the JSON names of a struct's fields.
func jsonFields(v any) []string {
	var out []string
	for f := range reflect.TypeOf(v).Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func joinProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

func TestWorldWritableManifestsAreReported(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.json")
	if err := os.WriteFile(p, []byte(goodManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	ms, problems := Load(dir)
	if len(ms) != 1 {
		t.Fatalf("a world-writable manifest must still be served")
	}
	if len(problems) != 1 || !strings.Contains(problems[0].String(), "m.json: warning: writable by every user (mode -rw-rw-rw-)") {
		t.Errorf("problems = %v", problems)
	}
}

// Schemas are kept compact, the form the tool list sends, so the list can
// share their bytes.
func TestSchemasAreKeptCompact(t *testing.T) {
	m, probs := Parse("m.json", []byte(`{
  "id": "m",
  "tools": [{
    "name": "a",
    "description": "A.",
    "inputSchema": {
      "type": "object",
      "properties": {"q": {"type": "string", "description": "two  spaces"}}
    },
    "outputSchema": {"type": "object"}
  }],
  "implementation": {"methods": {"a": "m.a"}}
}`))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	tool := m.Tools[0]
	if got, want := string(tool.InputSchema), `{"type":"object","properties":{"q":{"type":"string","description":"two  spaces"}}}`; got != want {
		t.Errorf("inputSchema = %s, want %s", got, want)
	}
	if got, want := string(tool.OutputSchema), `{"type":"object"}`; got != want {
		t.Errorf("outputSchema = %s, want %s", got, want)
	}
	if _, _, err := CompileSchemas(tool); err != nil {
		t.Errorf("the compact schemas do not compile: %v", err)
	}
}

// A tool's schema that is not an object schema is explained with the rule.
func TestSchemaRootProblemsNameTheRule(t *testing.T) {
	for schema, want := range map[string]string{
		`{"properties":{}}`: `the schema's root must have "type": "object"`,
		`{"type":"string"}`: `the schema's root must have "type": "object"`,
		`5`:                 `the schema must be a JSON object with "type": "object"`,
	} {
		_, problems := Parse("m.json", []byte(`{"id":"m","tools":[{"name":"a","inputSchema":`+schema+`}],"implementation":{"methods":{"a":"a"}}}`))
		if !slices.ContainsFunc(problems, func(p Problem) bool { return strings.Contains(p.Message, want) }) {
			t.Errorf("inputSchema %s: problems %v, want one saying %q", schema, problems, want)
		}
	}
}
