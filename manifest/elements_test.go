package manifest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The hooks change nothing of what a check finds: the schema library,
// compiled without them, finds the same violations, at the same places,
// from the same keywords.
func TestHooksKeepTheLibrarysVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		values       []string
	}{
		{"items", `{"type":"array","items":{"type":"string","minLength":2}}`,
			[]string{`["ab","cd"]`, `["ab",1,"c",null]`, `[]`}},
		{"items false after prefixItems", `{"prefixItems":[{"type":"integer"}],"items":false}`,
			[]string{`[1]`, `[1,2,3]`, `["a"]`}},
		{"draft 7 items and additionalItems", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"integer"}],"additionalItems":{"type":"string"}}`,
			[]string{`[1,"a"]`, `[1,2,true]`}},
		{"contains", `{"contains":{"type":"integer","minimum":5},"minContains":2}`,
			[]string{`[5,6]`, `[1,5,"x"]`}},
		{"object members", `{"additionalProperties":{"type":"integer"},"patternProperties":{"^s_":{"type":"string"}},"propertyNames":{"maxLength":4},"properties":{"id":{"type":"string"}}}`,
			[]string{`{"id":"x","n":1,"s_a":"b"}`, `{"id":1,"n":"x","s_a":2,"toolong":1}`}},
		{"unevaluated", `{"properties":{"a":{}},"unevaluatedProperties":false,"unevaluatedItems":{"type":"null"}}`,
			[]string{`{"a":1}`, `{"a":1,"b":2}`, `[null,1]`}},
		{"alternatives over elements", `{"type":"array","items":{"oneOf":[{"type":"object","required":["a"]},{"type":"object","required":["b"]},{"type":"integer"}]}}`,
			[]string{`[{"a":1},{"b":2},3]`, `[{"a":1,"b":2},{},"x"]`}},
		{"recursion", treeSchema,
			[]string{tree(4, "item", ""), tree(4, "bogus", ""), `{"kind":"group","children":[1,{"kind":"item"}]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := mustCompile(t, tc.schema)
			c := jsonschema.NewCompiler()
			c.Draft = jsonschema.Draft2020
			if err := c.AddResource("file:///t.json", strings.NewReader(tc.schema)); err != nil {
				t.Fatal(err)
			}
			plain := c.MustCompile("file:///t.json")
			for _, value := range tc.values {
				got, err := ours.Check(t.Context(), defaultDecoder, []byte(value))
				if err != nil {
					t.Fatal(err)
				}
				v, _ := decodeValue([]byte(value))
				var want []Violation
				if err := plain.Validate(v); err != nil {
					want = Violations(err)
				}
				if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
					t.Errorf("%s (-library +ours):\n%s", value, diff)
				}
			}
		})
	}
}

func sorted(vs []Violation) []Violation {
	return slices.SortedFunc(slices.Values(vs), func(a, b Violation) int {
		return strings.Compare(a.Pointer+"\x00"+a.Keyword+"\x00"+a.Message, b.Pointer+"\x00"+b.Keyword+"\x00"+b.Message)
	})
}

// Each element of an array is a step of its own, whatever its type: the
// check can stop between any two. The violations of the first
// maxDescribed elements that fail are kept, the others counted.
func TestEveryElementIsAStep(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`)
	var b bytes.Buffer
	b.WriteString(`{"a":[0`)
	for range 99_999 {
		b.WriteString(`,0`)
	}
	b.WriteString(`]}`)
	vs, steps, err := checkCopy(t, t.Context(), s, b.String())
	if err != nil {
		t.Fatal(err)
	}
	if steps < 100_000 {
		t.Errorf("the check took %d steps for 100,000 elements", steps)
	}
	if len(vs) != maxDescribed+1 || vs[0] != (Violation{Pointer: "/a/0", Message: "expected string, but got number", Keyword: "type"}) {
		t.Fatalf("%d violations, the first %+v", len(vs), vs[0])
	}
	if last, want := vs[maxDescribed].Message, fmt.Sprintf("%d more elements or members fail", 100_000-maxDescribed); !strings.HasPrefix(last, want) {
		t.Errorf("last violation %q, want %q…", last, want)
	}
}

// Draft 7's contentMediaType and contentSchema are annotations, as in
// later drafts: the library would check the content it decodes past the
// Decoder's limits.
func TestContentIsNotAsserted(t *testing.T) {
	s := mustCompile(t, `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"c":{"contentMediaType":"application/json","contentSchema":{"type":"integer","maximum":1}}}}`)
	for _, v := range []string{`{"c":"not JSON"}`, `{"c":"1` + strings.Repeat("0", 10_000) + `"}`} {
		if vs, err := s.Check(t.Context(), defaultDecoder, []byte(v)); len(vs) > 0 || err != nil {
			t.Errorf("%.40s: %v, %v", v, vs, err)
		}
	}
}
