package manifest

import (
	"strings"
	"testing"
)

// argCases pair a schema and arguments with what ArgumentsSurelyValid
// must say. false means "ask the library": every invalid case is false,
// and so are valid ones the fast path leaves to the library.
var argCases = []struct {
	schema, args string
	sure         bool
}{
	{`{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}`, `{"data":"x"}`, true},
	{`{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}`, `{"data":"x","other":[1,{"a":null}]}`, true},
	{`{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}`, `{}`, false},
	{`{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}`, `{"data":1}`, false},
	{`{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}`, `{"d\u0061ta":"x"}`, false}, // escaped key: library
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":500}}}`, `{"n":10}`, true},
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":500}}}`, `{"n":1}`, false}, // a tie: library (valid)
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":500}}}`, `{"n":0}`, false},
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":500}}}`, `{"n":501}`, false},
	{`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":2.0}`, false}, // an integer, but the library decides
	{`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":2.5}`, false},
	{`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0}}}`, `{"n":0.5}`, true},
	{`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0}}}`, `{"n":0}`, false},
	{`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3}}}`, `{"s":"éé"}`, true},
	{`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3}}}`, `{"s":"é"}`, false},
	{`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3}}}`, `{"s":"abcd"}`, false},
	{`{"type":"object","properties":{"s":{"enum":["a","b"]}}}`, `{"s":"b"}`, true},
	{`{"type":"object","properties":{"s":{"enum":["a","b"]}}}`, `{"s":"c"}`, false},
	{`{"type":"object","properties":{"s":{"enum":["a","b"]}}}`, `{"s":1}`, false},
	{`{"type":"object","properties":{"s":{"type":["string","null"]}}}`, `{"s":null}`, true},
	{`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false}}}`, `{"o":{"x":true}}`, true},
	{`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false}}}`, `{"o":{"x":true,"y":1}}`, false},
	{`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false}}}`, `{"o":{}}`, false},
	{`{"type":"object","properties":{"a":true,"b":{"description":"anything","default":1}}}`, `{"a":[],"b":"x"}`, true},
	{`{"type":"object","properties":{"b":{"type":"string","format":"date-time"}}}`, `{"b":"not a date"}`, false}, // the library asserts formats
	{`{"type":"object","properties":{"a":false}}`, `{}`, false},                                                  // not understood: library
	{`{"type":"object","properties":{"t":{"type":"array","items":{"type":"string"}}}}`, `{"t":["x"]}`, false},
	{`{"type":"object","$ref":"#/$defs/x","$defs":{"x":{}}}`, `{}`, false},
	{`{"type":"object"}`, `{"a":`, false},                                                  // not JSON
	{`{"type":"object","properties":{"\uFFFD":{"type":"string"}}}`, "{\"\xff\":1}", false}, // the key decodes to U+FFFD
}

func TestArgumentsSurelyValid(t *testing.T) {
	for _, c := range argCases {
		tool := &Tool{Name: "t", InputSchema: []byte(c.schema), file: "f.json"}
		if got := tool.ArgumentsSurelyValid([]byte(c.args)); got != c.sure {
			t.Errorf("schema %s, arguments %s: surely valid = %v, want %v", c.schema, c.args, got, c.sure)
		}
		in, _, err := tool.Schemas()
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		v, derr := decodeValue([]byte(c.args))
		if c.sure && (derr != nil || in.Validate(v) != nil) {
			t.Errorf("schema %s, arguments %s: the fast path is sure, the library is not", c.schema, c.args)
		}
	}
}

// FuzzArgumentsSurelyValid checks the fast path against the library:
// whenever the fast path is sure the arguments are valid, the library
// must agree.
func FuzzArgumentsSurelyValid(f *testing.F) {
	for _, c := range argCases {
		f.Add([]byte(c.schema), []byte(c.args))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		tool := &Tool{Name: "t", InputSchema: schema, file: "f.json"}
		if !tool.ArgumentsSurelyValid(args) {
			return
		}
		in, _, _ := tool.Schemas()
		v, err := decodeValue(args)
		if err != nil {
			t.Fatalf("sure about arguments that are not JSON: %s", args)
		}
		if err := in.Validate(v); err != nil {
			t.Fatalf("schema %s, arguments %s: the fast path is sure, the library says %v", schema, args, err)
		}
	})
}

// TestKeysDifferingOnlyInCase: encoding/json would decode "InputSchema"
// into the inputSchema field, so the schema checked and the one served
// would differ; such keys are errors.
func TestKeysDifferingOnlyInCase(t *testing.T) {
	for _, c := range []struct {
		doc, wantPath string
		wantManifest  bool
	}{
		{`{"id":"x","implementation":{"methods":{"a":"m"}},"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"},"InputSchema":{"type":"object","properties":{"p":{"pattern":"("}}}}]}`, "tools[0].InputSchema", true},
		{`{"id":"x","implementation":{"methods":{"a":"m"}},"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"},"annotations":{"ReadOnlyHint":"x"}}]}`, "tools[0].annotations.ReadOnlyHint", true},
		{`{"id":"x","implementation":{"methods":{"a":"m"}},"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}}],"Tools":[{"name":"a","inputSchema":{"type":"object","minLength":-1}}]}`, "Tools", false},
		{`{"id":"x","implementation":{"methods":{"a":"m"},"METHODS":{"a":"n"}},"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}}]}`, "implementation.METHODS", false},
	} {
		m, problems := Parse("f.json", []byte(c.doc))
		found := false
		for _, p := range problems {
			found = found || p.Severity == Error && p.Path == c.wantPath && strings.Contains(p.Message, "only in case")
		}
		if !found {
			t.Errorf("%s: problems %v, want an error at %s", c.doc, problems, c.wantPath)
		}
		if (m != nil) != c.wantManifest {
			t.Errorf("%s: manifest %v, want one: %v", c.doc, m != nil, c.wantManifest)
		}
		if m != nil && m.Tools[0].Servable() {
			t.Errorf("%s: the tool is served", c.doc)
		}
	}
}

// TestNumbersTheLibraryCannotTake: the schema library panics on numbers
// whose exponent is past a million; the fast paths stay clear of them and
// the bridge turns the panics into errors.
func TestNumbersTheLibraryCannotTake(t *testing.T) {
	huge := []struct{ schema, args string }{
		{`{"type":"object","properties":{"n":{"minimum":-1}}}`, `{"n":1e-1000001}`},
		{`{"type":"object","properties":{"n":{"type":"number","maximum":1}}}`, `{"n":-1e-1000001}`},
		{`{"type":"object","properties":{"n":{"maximum":1}}}`, `{"n":0.` + strings.Repeat("0", 1000001) + `1}`},
		{`{"type":"object","properties":{"s":{"type":"string","maxLength":9223372036854775807}}}`, `{"s":"a"}`},
	}
	for _, c := range huge {
		tool := &Tool{Name: "t", InputSchema: []byte(c.schema), file: "f.json"}
		if tool.ArgumentsSurelyValid([]byte(c.args)) {
			t.Errorf("schema %s: the fast path is sure of %.60s", c.schema, c.args)
		}
		in, _, err := tool.Schemas()
		if err != nil {
			t.Fatal(err)
		}
		v, _ := decodeValue([]byte(c.args))
		_ = Validate(in, v) // must not panic
	}
	for _, schema := range []string{`{"type":"object","minLength":1e1000001}`, `{"type":"object","multipleOf":1e-1000001}`} {
		m, problems := Parse("f.json", []byte(`{"id":"x","implementation":{"methods":{"a":"m"}},"tools":[{"name":"a","description":"d","inputSchema":`+schema+`}]}`))
		if m == nil || m.Tools[0].Servable() || !HasErrors(problems) {
			t.Errorf("%s: served, or no error: %v", schema, problems)
		}
	}
}
