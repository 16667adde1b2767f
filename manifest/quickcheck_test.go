package manifest

import (
	"testing"
)

// quickCases are schemas with what surelyCompiles must say about them.
// false means "ask the library", so every invalid schema must be false;
// the valid ones that are false use something the fast path leaves to
// the library.
var quickCases = []struct {
	schema string
	sure   bool
}{
	{`true`, true},
	{`{}`, true},
	{`{"type":"object","properties":{}}`, true},
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, true},
	{`{"type":"object","properties":{"q":{"type":"string","description":"d","minLength":1,"maxLength":10,"pattern":"^a+$","format":"date-time"},` +
		`"n":{"type":["integer","null"],"minimum":-1.5,"exclusiveMaximum":1e3,"multipleOf":0.5,"default":2},` +
		`"tags":{"type":"array","items":{"enum":["a",1,null,{"x":[]}]},"minItems":0,"uniqueItems":true,"prefixItems":[true,{"const":3}]},` +
		`"o":{"type":"object","additionalProperties":false,"patternProperties":{"^x-":{}},"propertyNames":{"maxLength":3},"dependentRequired":{"a":["b"]}},` +
		`"any":{"anyOf":[{"type":"string"},{"type":"number"}],"not":{"const":0},"if":{},"then":{},"else":false}},` +
		`"required":["q"],"$defs":{"unused":{"type":"string"}},"title":"t","examples":[{}],"deprecated":false}`, true},

	// Valid, but left to the library.
	{`{"$ref":"#/$defs/a","$defs":{"a":{"type":"object"}}}`, false},
	{`{"$id":"urn:x","type":"object"}`, false},
	{`{"type":"object","x-extension":1}`, false},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, false},
	{`{"type":"object","properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, false},
	{`{"type":"string","minLength":1.0}`, false},

	// Invalid.
	{`{"type":"objekt"}`, false},
	{`{"type":[]}`, false},
	{`{"type":["string","string"]}`, false},
	{`{"type":1}`, false},
	{`{"required":["a","a"]}`, false},
	{`{"required":"a"}`, false},
	{`{"properties":{"a":1}}`, false},
	{`{"properties":[]}`, false},
	{`{"items":[{"type":"string"}]}`, false},
	{`{"allOf":[]}`, false},
	{`{"minLength":-1}`, false},
	{`{"minLength":"1"}`, false},
	{`{"minimum":"0"}`, false},
	{`{"multipleOf":0}`, false},
	{`{"multipleOf":-2}`, false},
	{`{"pattern":"("}`, false},
	{`{"patternProperties":{"(":{}}}`, false},
	{`{"enum":{}}`, false},
	{`{"title":5}`, false},
	{`{"uniqueItems":"yes"}`, false},
	{`{"dependentRequired":{"a":"b"}}`, false},
	{`"object"`, false},
	{`null`, false},
}

func TestSurelyCompiles(t *testing.T) {
	for _, c := range quickCases {
		v, err := decodeValue([]byte(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if got := surelyCompiles(v); got != c.sure {
			t.Errorf("surelyCompiles(%s) = %v, want %v", c.schema, got, c.sure)
		}
		_, cerr := CompileSchema("f.json", "s", []byte(c.schema))
		if c.sure && cerr != nil {
			t.Errorf("%s: the fast path is sure but the library says %v", c.schema, cerr)
		}
	}
}

// TestSurelyCompilesDeep: very deep schemas go to the library.
func TestSurelyCompilesDeep(t *testing.T) {
	s := `{"type":"string"}`
	for range maxQuickDepth + 2 {
		s = `{"type":"object","properties":{"a":` + s + `}}`
	}
	v, err := decodeValue([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	if surelyCompiles(v) {
		t.Errorf("a schema deeper than %d levels took the fast path", maxQuickDepth)
	}
}

// TestParseLeavesCompilingToFirstCall: a plain schema is not compiled at
// load (that was most of a large load's time and garbage), but a schema
// the fast path is unsure of still is, so its errors are reported at load.
func TestParseLeavesCompilingToFirstCall(t *testing.T) {
	m, problems := Parse("f.json", []byte(`{"id":"x","tools":[
		{"name":"plain","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}},
		{"name":"ref","description":"d","inputSchema":{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}}],
		"implementation":{"methods":{"plain":"p","ref":"r"}}}`))
	if m == nil {
		t.Fatalf("no manifest: %v", problems)
	}
	plain, ref := m.Tools[0], m.Tools[1]
	if plain.Broken || !ref.Broken {
		t.Fatalf("broken: plain=%v ref=%v, want false, true (%v)", plain.Broken, ref.Broken, problems)
	}
	if len(problems) != 1 || problems[0].Tool != "ref" {
		t.Errorf("problems = %v, want one, for ref", problems)
	}
	if in, _, err := plain.Schemas(); in == nil || err != nil {
		t.Errorf("plain.Schemas() = %v, %v", in, err)
	}
}

// FuzzSurelyCompiles checks the fast path against the library: whenever
// surelyCompiles is sure, the library must compile the schema.
func FuzzSurelyCompiles(f *testing.F) {
	for _, c := range quickCases {
		f.Add([]byte(c.schema))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeValue(data)
		if err != nil || !surelyCompiles(v) {
			return
		}
		if _, err := CompileSchema("f.json", "s", data); err != nil {
			t.Fatalf("the fast path is sure %s compiles, the library says %v", data, err)
		}
	})
}

// FuzzSurelyWellFormed checks the manifest fast path against the format
// schema: whenever surelyWellFormed is sure, the schema must agree.
func FuzzSurelyWellFormed(f *testing.F) {
	f.Add([]byte(goodManifest))
	f.Add([]byte(`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"},"annotations":{"title":"t","readOnlyHint":true,"x":1}}],"implementation":{"type":"internal","methods":{"a":"m"}},"requires":{},"compatibility":{}}`))
	f.Add([]byte(`{"id":"","tools":[]}`))
	f.Add([]byte(`{"id":"x","tools":[{"name":"a","inputSchema":{"type":["object"]}}]}`))
	f.Add([]byte(`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"},"mcp_expose":"no"}],"implementation":{"methods":{"a":""}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := decodeValue(data)
		if err != nil || !surelyWellFormed(doc) {
			return
		}
		if err := metaSchema().Validate(doc); err != nil {
			t.Fatalf("the fast path is sure %s is well formed, the format schema says %v", data, err)
		}
	})
}

// TestSurelyWellFormed: every malformed manifest in the parse tests is
// left to the library (which reports it), and a good one is not.
func TestSurelyWellFormed(t *testing.T) {
	for _, c := range []struct {
		doc  string
		sure bool
	}{
		{goodManifest, true},
		{`{"id":"x","tools":[]}`, true},
		{`{"id":"x"}`, false},
		{`{"tools":[]}`, false},
		{`{"id":"","tools":[]}`, false},
		{`{"id":1,"tools":[]}`, false},
		{`{"id":"x","tools":{}}`, false},
		{`{"id":"x","tools":[{"inputSchema":{"type":"object"}}]}`, false},
		{`{"id":"x","tools":[{"name":"a"}]}`, false},
		{`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"string"}}]}`, false},
		{`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"},"outputSchema":{}}]}`, false},
		{`{"id":"x","tools":[{"name":"a","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}}]}`, false},
		{`{"id":"x","tools":[],"implementation":{"methods":{"a":1}}}`, false},
		{`{"id":"x","tools":[],"implementation":[]}`, false},
		{`{"id":"x","tools":[],"requires":[]}`, false},
		{`[]`, false},
	} {
		doc, err := decodeValue([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := surelyWellFormed(doc); got != c.sure {
			t.Errorf("surelyWellFormed(%s) = %v, want %v", c.doc, got, c.sure)
		}
		if verr := metaSchema().Validate(doc); (verr == nil) != c.sure {
			t.Errorf("%s: the format schema says %v; this case should be sure=%v", c.doc, verr, verr == nil)
		}
	}
}
