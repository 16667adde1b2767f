package protocol

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// sameJSON reports whether a and b are JSON texts of equal values.
func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && cmp.Equal(va, vb)
}

// A result written in parts from the backend's bytes is the same message
// as the one the encoder makes from a copy of them: byte for byte, but
// that the structured content keeps the backend's spacing and its U+2028
// and U+2029 as they were (JSON allows both; only the text, a JSON string
// of the value, escapes them).
func TestAResultWrittenInPartsIsTheEncodersMessage(t *testing.T) {
	values := []string{
		`{"id":"n1","title":"groceries"}`,
		`["a","b"]`,
		`"a string with \"quotes\", a tab\t and a newline\n"`,
		`{"sep":"` + "\u2028 and \u2029" + `","emoji":"🦜","ctl":"\u0001"}`,
		`{"big":"` + strings.Repeat("é\\\"x", 40<<10) + `"}`, // crosses the escaping chunks mid-way
		`12.5`,
		`{ "spaced" : [ 1 , 2 ] }`,
	}
	tails := map[string]resultTail{
		"legacy": {},
		"modern": {ResultType: "complete", Meta: &resultMeta{ServerInfo: &Implementation{Name: "s", Version: "1"}}},
	}
	for _, v := range values {
		for name, tail := range tails {
			for _, isError := range []bool{false, true} {
				res := JSONResult(jsontext.Value(v))
				res.IsError = isError
				got, err := encodeCallResult(jsontext.Value(`"x"`), &callToolResult{CallToolResult: *res, resultTail: tail})
				if err != nil {
					t.Fatal(err)
				}
				copied := TextResult(v, isError)
				copied.StructuredContent = res.StructuredContent
				want, err := encodeResult(jsontext.Value(`"x"`), &callToolResult{CallToolResult: *copied, resultTail: tail})
				if err != nil {
					t.Fatal(err)
				}
				exact := !strings.ContainsAny(v, " \u2028\u2029")
				if exact && string(got.Bytes()) != string(want) || !exact && !sameJSON(got.Bytes(), want) {
					t.Errorf("%.40s (%s, isError %v):\n got %.300s\nwant %.300s", v, name, isError, got.Bytes(), want)
				}
				if got.uncounted() > 400 {
					t.Errorf("%.40s: %d bytes counted again; the result's bytes are counted as read", v, got.uncounted())
				}
			}
		}
	}
}
