package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// headerManifest is a manifest of two tools: a, plain, and b, whose
// inputSchema is schema.
func headerManifest(schema string) string {
	return `{"id":"x","tools":[{"name":"a","description":"A.","inputSchema":{"type":"object"}},` +
		`{"name":"b","description":"B.","inputSchema":` + schema + `}],"implementation":{"methods":{"a":"a","b":"b"}}}`
}

func TestHeadersAreFoundWhereMCPAllowsThem(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []Header
	}{
		{name: "none", schema: `{"type":"object","properties":{"q":{"type":"string"}}}`},
		{name: "a string, an integer and a boolean, in the order of their paths",
			schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}}`,
			want:   []Header{{"Dry-Run", []string{"dry"}}, {"Priority", []string{"priority"}}, {"Region", []string{"region"}}}},
		{name: "a nested property reached through properties alone",
			schema: `{"type":"object","properties":{"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`,
			want:   []Header{{"Zone", []string{"where", "zone"}}}},
		{name: "every tchar is allowed",
			schema: "{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"string\",\"x-mcp-header\":\"a0!#$%&'*+-.^_`|~Z\"}}}",
			want:   []Header{{"a0!#$%&'*+-.^_`|~Z", []string{"v"}}}},
		{name: "x-mcp-header in const, default, examples and enum is data, not an annotation",
			schema: `{"type":"object","properties":{"o":{"type":"object","const":{"x-mcp-header":"A"},"default":{"x-mcp-header":"B"},"examples":[{"x-mcp-header":"C"}],"enum":[{"x-mcp-header":"D"}]}}}`},
		{name: "x-mcp-header in an unknown keyword is data",
			schema: `{"type":"object","x-ui":{"x-mcp-header":"A"}}`},
		{name: "a property named x-mcp-header is a property",
			schema: `{"type":"object","properties":{"x-mcp-header":{"type":"string","x-mcp-header":"Odd"}}}`,
			want:   []Header{{"Odd", []string{"x-mcp-header"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("m.json", []byte(headerManifest(tt.schema)))
			if m == nil || len(problems) != 0 {
				t.Fatalf("problems: %v", problems)
			}
			b := m.Tools[1]
			if !b.Servable() {
				t.Fatal("tool b is not servable")
			}
			if diff := cmp.Diff(tt.want, b.Headers); diff != "" {
				t.Errorf("Headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnInvalidHeaderBreaksTheTool(t *testing.T) {
	prop := func(p string) string { return `{"type":"object","properties":{"v":` + p + `}}` }
	tests := []struct {
		name, schema string
		problems     []string // substrings of Problem.String(), in order
	}{
		{"an empty name", prop(`{"type":"string","x-mcp-header":""}`),
			[]string{`m.json:tools[1].inputSchema.properties.v.x-mcp-header: error: x-mcp-header "" on argument v is empty`}},
		{"a name with a space", prop(`{"type":"string","x-mcp-header":"My Region"}`),
			[]string{`x-mcp-header "My Region" on argument v is not an HTTP token`}},
		{"a name with a colon", prop(`{"type":"string","x-mcp-header":"Region:Primary"}`), []string{"is not an HTTP token"}},
		{"a name that is not ASCII", prop(`{"type":"string","x-mcp-header":"Région"}`), []string{"is not an HTTP token"}},
		{"a name with a control character", prop(`{"type":"string","x-mcp-header":"Region\t1"}`), []string{"is not an HTTP token"}},
		{"a name with CR LF", prop(`{"type":"string","x-mcp-header":"A\r\nX-Evil: 1"}`), []string{"is not an HTTP token"}},
		{"a name that is not a string", prop(`{"type":"string","x-mcp-header":5}`), []string{"x-mcp-header on argument v is not a string"}},
		{"the same name twice",
			`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}`,
			[]string{`properties.b.x-mcp-header: error: x-mcp-header "Region" on argument b repeats x-mcp-header "Region" of argument a`}},
		{"the same name in other capitals",
			`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"n":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"myfield"}}}}}`,
			[]string{`properties.n.properties.b.x-mcp-header: error: x-mcp-header "myfield" on argument n.b repeats x-mcp-header "MyField" of argument a: header names ignore case`}},
		{"a number", prop(`{"type":"number","x-mcp-header":"Score"}`), []string{`x-mcp-header "Score" on argument v is on a "number"`}},
		{"an object", prop(`{"type":"object","x-mcp-header":"Data"}`), []string{`is on a "object"`}},
		{"an array", prop(`{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}`), []string{`is on a "array"`}},
		{"a null", prop(`{"type":"null","x-mcp-header":"Nil"}`), []string{`is on a "null"`}},
		{"no type", prop(`{"enum":["a","b"],"x-mcp-header":"Pick"}`), []string{`has no "type"`}},
		{"a list of types", prop(`{"type":["string","null"],"x-mcp-header":"Maybe"}`), []string{`has a "type" that is not one string`}},
		{"on the root", `{"type":"object","x-mcp-header":"Root"}`,
			[]string{`tools[1].inputSchema.x-mcp-header: error: x-mcp-header "Root" is on the schema's root`}},
		{"under items", prop(`{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}`),
			[]string{`properties.v.items.x-mcp-header: error: x-mcp-header "Item" is under items: only a property reached from the root through "properties" alone`}},
		{"under the properties of items", prop(`{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","x-mcp-header":"K"}}}}`),
			[]string{`properties.v.items.properties.k.x-mcp-header: error: x-mcp-header "K" is under items`}},
		{"under prefixItems", prop(`{"type":"array","prefixItems":[{"type":"string","x-mcp-header":"P"}]}`), []string{`prefixItems[0].x-mcp-header: error: x-mcp-header "P" is under prefixItems`}},
		{"under oneOf", prop(`{"oneOf":[{"type":"string"},{"type":"string","x-mcp-header":"R"}]}`), []string{`properties.v.oneOf[1].x-mcp-header: error: x-mcp-header "R" is under oneOf`}},
		{"under anyOf", prop(`{"anyOf":[{"type":"string"},{"type":"string","x-mcp-header":"R"}]}`), []string{`properties.v.anyOf[1].x-mcp-header: error: x-mcp-header "R" is under anyOf`}},
		{"under allOf", prop(`{"allOf":[{"type":"string"},{"type":"string","x-mcp-header":"R"}]}`), []string{`properties.v.allOf[1].x-mcp-header: error: x-mcp-header "R" is under allOf`}},
		{"under not", `{"type":"object","not":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}}`, []string{`is under not`}},
		{"under if", `{"type":"object","if":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}}`, []string{`is under if`}},
		{"under then", `{"type":"object","then":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}}`, []string{`is under then`}},
		{"under else", `{"type":"object","else":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}}`, []string{`is under else`}},
		{"behind a $ref", `{"type":"object","$defs":{"r":{"type":"string","x-mcp-header":"R"}},"properties":{"r":{"$ref":"#/$defs/r"}}}`,
			[]string{`inputSchema.$defs.r.x-mcp-header: error: x-mcp-header "R" is under $defs`}},
		{"under additionalProperties", `{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"R"}}`, []string{`is under additionalProperties`}},
		{"under patternProperties", `{"type":"object","patternProperties":{"^r":{"type":"string","x-mcp-header":"R"}}}`, []string{`patternProperties.^r.x-mcp-header: error: x-mcp-header "R" is under patternProperties`}},
		{"every invalid one is reported",
			`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"B B"}}}`,
			[]string{`x-mcp-header "A" on argument a is on a "number"`, `x-mcp-header "B B" on argument b is not an HTTP token`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("m.json", []byte(headerManifest(tt.schema)))
			if m == nil {
				t.Fatalf("Parse returned nil; problems: %v", problems)
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(tt.problems), joinProblems(problems))
			}
			for i, want := range tt.problems {
				got := problems[i]
				if !strings.Contains(got.String(), want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got, want)
				}
				if got.Severity != Error || got.Tool != "b" || !strings.HasSuffix(got.Message, `so tool "b" is not served`) {
					t.Errorf("problem %d = %+v, want an error about tool b that says it is not served", i, got)
				}
			}
			if b := m.Tools[1]; !b.Broken || b.Servable() || b.Headers != nil {
				t.Errorf("tool b: broken %v, servable %v, headers %v; want broken, without headers", b.Broken, b.Servable(), b.Headers)
			}
			if !m.Tools[0].Servable() {
				t.Error("tool a is not servable, but the problems are b's")
			}
		})
	}
}
