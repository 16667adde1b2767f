package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// twoTools is a manifest whose first tool has extra members: the second
// tool must be served whatever is wrong with the first.
func twoTools(members string) string {
	return `{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"}` + members + `},{"name":"b","description":"B.","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a":"ma","b":"mb"}}}`
}

// checkOutcome checks that Parse reports an error at path (whose message
// contains msg), and either refuses the file or breaks only tool a of
// twoTools.
func checkOutcome(t *testing.T, data, path, msg string, file bool) {
	t.Helper()
	m, problems := Parse("f.json", []byte(data))
	var found *Problem
	for i, p := range problems {
		if p.Severity == Error && p.Path == path && strings.Contains(p.Message, msg) {
			found = &problems[i]
		}
	}
	if found == nil {
		t.Fatalf("no error at %s with %q; problems:\n%s", path, msg, joinProblems(problems))
	}
	if file {
		if m != nil {
			t.Error("the file was served")
		}
		return
	}
	if m == nil || len(m.Tools) != 2 || !m.Tools[0].Broken || !m.Tools[1].Servable() || found.Tool != "a" {
		t.Errorf("want tool a broken and tool b served; problem %+v", *found)
	}
}

// A name twice in one object is an error where it is: which of the two
// counts would be a guess, and the Rust bridge refuses such a file too
// (serde's "duplicate field").
func TestRepeatedNamesAreErrors(t *testing.T) {
	for _, tt := range []struct {
		name, data, path string
		file             bool // the whole file is refused, not one tool
	}{
		{"the manifest's id", `{"id":5,"id":"x","tools":[]}`, "id", true},
		{"the manifest's tools", `{"id":"x","tools":[],"tools":[]}`, "tools", true},
		{"the manifest's tools, with tools in them", `{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"}}],"tools":[{"name":"b","inputSchema":{"type":"object"}}]}`, "tools", true},
		{"implementation's methods", `{"id":"x","tools":[],"implementation":{"methods":{"a":"ma"},"methods":{}}}`, "implementation.methods", true},
		{"a method name", `{"id":"x","tools":[],"implementation":{"methods":{"a":"m1","a":"m2"}}}`, "implementation.methods.a", true},
		{"an unknown member of the manifest", `{"id":"x","x-a":1,"x-a":{},"tools":[]}`, "x-a", true},
		{"a member of requires", `{"id":"x","tools":[],"requires":{"p":[1],"p":[2]}}`, "requires.p", true},
		{"a tool's schema", twoTools(`,"inputSchema":{"type":"object"}`), "tools[0].inputSchema", false},
		{"a tool's mcpExpose", twoTools(`,"mcpExpose":"no","mcpExpose":true`), "tools[0].mcpExpose", false},
		{"an annotation", twoTools(`,"annotations":{"readOnlyHint":true,"readOnlyHint":false}`), "tools[0].annotations.readOnlyHint", false},
		{"the annotations", twoTools(`,"annotations":{"readOnlyHint":true},"annotations":{"title":"T"}`), "tools[0].annotations", false},
		{"an unknown member of a tool", twoTools(`,"x-b":1,"x-b":2`), "tools[0].x-b", false},
		{"a property in a schema", twoTools(`,"outputSchema":{"type":"object","properties":{"q":{},"q":{"type":"string"}}}`), "tools[0].outputSchema.properties.q", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkOutcome(t, tt.data, tt.path, "appears twice", tt.file)
		})
	}
}

func TestInvalidUTF8IsAnError(t *testing.T) {
	for _, tt := range []struct {
		name, data, path string
		file             bool
	}{
		{"in the manifest's name", "{\"id\":\"x\",\"name\":\"caf\xe9\",\"tools\":[]}", "name", true},
		{"in a method", "{\"id\":\"x\",\"tools\":[],\"implementation\":{\"methods\":{\"a\":\"m\xff\"}}}", "implementation.methods.a", true},
		{"in a tool's description", twoTools(",\"description\":\"caf\xe9\""), "tools[0].description", false},
		{"in a schema", twoTools(",\"outputSchema\":{\"type\":\"object\",\"description\":\"\xff\"}"), "tools[0].outputSchema.description", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkOutcome(t, tt.data, tt.path, "invalid UTF-8", tt.file)
		})
	}
}

// Names are case-sensitive: a member whose name differs from a field's in
// case is an unknown member, never taken for the field.
func TestNamesAreCaseSensitive(t *testing.T) {
	t.Run("a tool's InputSchema is not its inputSchema", func(t *testing.T) {
		checkOutcome(t, `{"id":"x","tools":[{"name":"a","InputSchema":{"type":"object"}},{"name":"b","description":"B.","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a":"ma","b":"mb"}}}`,
			"tools[0]", "missing properties: 'inputSchema'", false)
	})
	t.Run("the manifest's ID is not its id", func(t *testing.T) {
		checkOutcome(t, `{"ID":"x","tools":[]}`, "", "missing properties: 'id'", true)
	})
	m, problems := Parse("f.json", []byte(`{"id":"x","Id":"y","tools":[{"name":"a","description":"A.","inputSchema":{"type":"object"},"InputSchema":{"type":"string"},
		"mcpexpose":false,"annotations":{"readonlyHint":true,"readOnlyHint":false}}],"implementation":{"methods":{"a":"ma"},"Methods":{"a":"other"}}}`))
	if len(problems) != 0 {
		t.Fatalf("problems:\n%s", joinProblems(problems))
	}
	a := m.Tools[0]
	if m.ID != "x" || string(a.InputSchema) != `{"type":"object"}` || !a.Servable() || a.Method != "ma" || *a.Annotations.ReadOnlyHint {
		t.Errorf("a member differing in case was taken for a field: id %q, tool %+v, annotations %+v", m.ID, a, a.Annotations)
	}
}

// What Parse serves is what the file says: escapes decoded in strings the
// bridge reads, schemas passed on as written, only without white space.
func TestParseDecodesMembers(t *testing.T) {
	type view struct {
		ID, Name, Title, Description, Method string
		InputSchema, OutputSchema            string
		Annotations                          *Annotations
		Exposed                              bool
		Requires                             string
	}
	no := false
	for _, tt := range []struct {
		name, data string
		want       view
	}{
		{name: "escapes", data: `{"id":"\u0078","tools":[{"name":"a\u002eb","description":"tab\there \ud83d\ude00","inputSchema":{"type":"object","description":"caf\u00e9"},"annotations":{"title":"\"q\"","readOnlyHint":false}}],"implementation":{"methods":{"a\u002eb":"m\/n"}}}`,
			want: view{ID: "x", Name: "a.b", Description: "tab\there 😀", Method: "m/n", InputSchema: `{"type":"object","description":"caf\u00e9"}`, Annotations: &Annotations{Title: `"q"`, ReadOnlyHint: &no}, Exposed: true}},
		{name: "white space", data: "{ \"id\" : \"x\" ,\n \"tools\" : [ { \"name\" : \"a\" , \"title\": \"A\", \"inputSchema\" : { \"type\" : \"object\", \"properties\": {\"q\": {\"description\": \"two  spaces\"}} } ,\r\n\t\"outputSchema\": {\"type\": \"object\"} } ] , \"requires\" : { \"a\" : [ 1 , 2 ] } }",
			want: view{ID: "x", Name: "a", Title: "A", InputSchema: `{"type":"object","properties":{"q":{"description":"two  spaces"}}}`, OutputSchema: `{"type":"object"}`, Exposed: true, Requires: `{"a":[1,2]}`}},
		{name: "unknown members are ignored", data: `{"id":"x","extra":{"tools":[]},"tools":[{"name":"a","inputSchema":{"type":"object"},"x-note":"n","mcp_expose":false}]}`,
			want: view{ID: "x", Name: "a", InputSchema: `{"type":"object"}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("f.json", []byte(tt.data))
			if m == nil || len(m.Tools) != 1 || m.Tools[0].Broken {
				t.Fatalf("not served; problems:\n%s", joinProblems(problems))
			}
			tool := m.Tools[0]
			var requires string
			if m.Requires != nil {
				c := m.Requires.Clone()
				if err := c.Compact(); err != nil {
					t.Fatal(err)
				}
				requires = string(c)
			}
			got := view{m.ID, tool.Name, tool.Title, tool.Description, tool.Method, string(tool.InputSchema), string(tool.OutputSchema), tool.Annotations, tool.Exposed(), requires}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// A value of the wrong type, null included, is an error at its path.
func TestWrongTypesAreErrors(t *testing.T) {
	for _, tt := range []struct {
		name, data, path, msg string
		file                  bool
	}{
		{"a null name of the manifest", `{"id":"x","name":null,"tools":[]}`, "name", "expected string, but got null", true},
		{"a null method", `{"id":"x","tools":[],"implementation":{"methods":{"a":null}}}`, "implementation.methods.a", "expected string, but got null", true},
		{"tools that are not an array", `{"id":"x","tools":{"a":{}}}`, "tools", "expected array, but got object", true},
		{"a null title of a tool", twoTools(`,"title":null`), "tools[0].title", "expected string, but got null", false},
		{"a null outputSchema", twoTools(`,"outputSchema":null`), "tools[0].outputSchema", "expected object, but got null", false},
		{"a title that is a number", twoTools(`,"title":3`), "tools[0].title", "expected string, but got number", false},
		{"an annotation that is a string", twoTools(`,"annotations":{"readOnlyHint":"yes"}`), "tools[0].annotations.readOnlyHint", "expected boolean, but got string", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkOutcome(t, tt.data, tt.path, tt.msg, tt.file)
		})
	}
}

func TestToolsThatAreNotObjectsAreBroken(t *testing.T) {
	m, problems := Parse("f.json", []byte(`{"id":"x","tools":[1,{"name":2},null,{"name":"d","description":"D.","inputSchema":{"type":"object"}}],"implementation":{"methods":{"d":"md"}}}`))
	want := []string{
		"f.json:tools[0]: error: expected object, but got number",
		"f.json:tools[1]: error: missing properties: 'inputSchema'",
		"f.json:tools[1].name: error: expected string, but got number",
		"f.json:tools[2]: error: expected object, but got null",
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if m == nil || len(m.Tools) != 4 || !m.Tools[3].Servable() {
		t.Errorf("tool d is not served")
	}
}

func ExampleParse() {
	m, _ := Parse("f.json", []byte(`{"id":"x","tools":[{"name":"a","title":"A","inputSchema":{ "type": "object" },"annotations":{"readOnlyHint":true}}],"implementation":{"methods":{"a":"m"}}}`))
	fmt.Println(m.ID, m.Tools[0].Name, m.Tools[0].Title, string(m.Tools[0].InputSchema), *m.Tools[0].Annotations.ReadOnlyHint, m.Tools[0].Method)
	// Output: x a A {"type":"object"} true m
}
