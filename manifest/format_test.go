package manifest

import (
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// Formats are checked as the schema library checks them, within a length
// per format, and a message never quotes more than the start of a value.
func TestFormatsAreCheckedWithinTheirLengths(t *testing.T) {
	huge := strings.Repeat("a", 8_000_000)
	for _, tc := range []struct {
		format, value string
		want          string // a substring of the one violation; "" for none
	}{
		{"regex", `^[a-z]+(-[a-z]+)*$`, ""},
		{"regex", `(`, `"(" is not valid "regex"`},
		{"regex", strings.Repeat("a", 1000), ""},
		{"regex", strings.Repeat("a", 1001), `is 1001 bytes long, longer than the 1000 bytes that are checked as "regex"`},
		{"regex", huge, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"… is 8000000 bytes long`},
		{"duration", "P1Y2M3DT4H5M6S", ""},
		{"duration", "P" + strings.Repeat("1Y", 20_000), "longer than the 256 bytes"},
		{"period", "2024-01-01T00:00:00Z/" + "P" + strings.Repeat("1Y", 20_000), "longer than the 256 bytes"},
		{"date", "2024-02-29", ""},
		{"date", huge, "longer than the 10 bytes"},
		{"date-time", "2024-02-29T12:00:00.5+01:00", ""},
		{"date-time", "2024-02-29T12:00:00." + huge + "Z", "is not valid"},
		{"ipv4", "192.0.2.1", ""},
		{"ipv4", strings.Repeat(".", 1000), "longer than the 15 bytes"},
		{"ipv6", "2001:db8::1", ""},
		{"json-pointer", "/a/b~1c", ""},
		{"json-pointer", strings.Repeat("/", 8_000_000), "longer than the 65536 bytes"},
		{"email", "someone@example.com", ""},
		{"email", huge + "@example.com", `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"… is not valid "email"`},
		{"hostname", "example.com", ""},
		{"uri", "https://example.com/a?b#c", ""},
		{"uri", "https://example.com/" + huge, ""},
		{"uuid", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", ""},
		{"an unknown format", "anything", ""},
	} {
		t.Run(tc.format+" "+safetext.Quote(tc.value, previewLength), func(t *testing.T) {
			s := mustCompile(t, `{"type":"object","properties":{"v":{"type":"string","format":"`+tc.format+`"}}}`)
			vs, err := s.Check(t.Context(), Limits{Size: 16 << 20}.Decoder(), []byte(`{"v":"`+tc.value+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(vs) > 0:
				t.Errorf("violations = %v, want none", vs)
			case tc.want != "" && (len(vs) != 1 || !strings.Contains(vs[0].Message, tc.want)):
				t.Errorf("violations = %.300v, want one with %q", vs, tc.want)
			case len(vs) == 1 && (len(vs[0].Message) > 200 || vs[0].Keyword != "format" || vs[0].Pointer != "/v"):
				t.Errorf("violation = %.300v, want a short message about /v's format", vs[0])
			}
		})
	}
}

// A schema whose draft makes format an annotation (2019-09 and later,
// named by $schema) does not assert it; the others do, as the schema
// library decides.
func TestFormatsAreAssertedAsTheDraftSays(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		asserted     bool
	}{
		{"no $schema: 2020-12, as the library asserts it", "", true},
		{"draft-07", `"$schema":"http://json-schema.org/draft-07/schema#",`, true},
		{"draft 2020-12 named", `"$schema":"https://json-schema.org/draft/2020-12/schema",`, false},
		{"draft 2019-09 named", `"$schema":"https://json-schema.org/draft/2019-09/schema",`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, `{`+tc.schema+`"type":"object","properties":{"v":{"format":"regex"}}}`)
			vs, err := s.Check(t.Context(), defaultDecoder, []byte(`{"v":"("}`))
			if err != nil || (len(vs) > 0) != tc.asserted {
				t.Errorf("violations = %v, %v; want the format asserted: %v", vs, err, tc.asserted)
			}
		})
	}
}

// A schema's patterns are compiled when the schema is: one longer than
// maxPatternLength keeps the tool from being served, before any is
// compiled.
func TestLongPatternsInASchemaAreRefused(t *testing.T) {
	long := strings.Repeat("a", maxPatternLength+1)
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"a long pattern", `{"type":"object","properties":{"p":{"type":"string","pattern":"` + long + `"}}}`,
			"tools[0].inputSchema: error: schema does not compile: properties.p.pattern: a pattern of 4097 bytes, longer than the 4096 bytes that are compiled"},
		{"a long name in patternProperties", `{"type":"object","patternProperties":{"` + long + `":{}}}`,
			"schema does not compile: patternProperties: a pattern of 4097 bytes"},
		{"a pattern as long as allowed", `{"type":"object","properties":{"p":{"pattern":"` + long[1:] + `"}}}`, ""},
		{"a long string that is a value, not a pattern", `{"type":"object","const":{"pattern":"` + long + `"}}`, ""},
		{"a property named pattern", `{"type":"object","properties":{"pattern":{"type":"string"}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, problems := Parse("m.json", []byte(`{"id":"x","tools":[{"name":"a","description":"A.","inputSchema":`+tc.schema+`}],"implementation":{"methods":{"a":"a"}}}`))
			got := joinProblems(problems)
			if m == nil || m.Tools[0].Broken != (tc.want != "") || !strings.Contains(got, tc.want) {
				t.Errorf("problems:\n%.500s\nwant %q", got, tc.want)
			}
		})
	}
}
