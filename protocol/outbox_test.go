package protocol

import (
	"bytes"
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
				got, err := (&callToolResult{CallToolResult: *res, resultTail: tail}).encodeMessage(jsontext.Value(`"x"`))
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

// quotedByEncoder is appendQuoted's reference: the encoder's escaping of
// the whole of src, with U+2028 and U+2029 escaped after.
func quotedByEncoder(src []byte) []byte {
	q, _ := jsontext.AppendQuote(nil, src)
	q = q[1 : len(q)-1]
	q = bytes.ReplaceAll(q, []byte("\u2028"), []byte(`\u2028`))
	return bytes.ReplaceAll(q, []byte("\u2029"), []byte(`\u2029`))
}

// appendQuoted escapes as the encoder does, byte for byte, whatever lies
// either side of the 8-byte words it reads at once.
func TestAppendQuotedEscapesAsTheEncoder(t *testing.T) {
	special := []string{"\"", "\\", "\x00", "\x1f", "\x7f", " ", "é", "🦜", "\u2028", "\u2029", "\xff", "\xe2\x80", "<&>", "\t\n\r"}
	for _, s := range special {
		for pad := range 17 { // the special text at every place in a word
			for _, text := range []string{strings.Repeat("a", pad) + s, s + strings.Repeat("b", pad), strings.Repeat("c", pad) + s + strings.Repeat("d", 16-pad)} {
				if got, want := appendQuoted([]byte("x"), []byte(text)), append([]byte("x"), quotedByEncoder([]byte(text))...); !bytes.Equal(got, want) {
					t.Errorf("%q: got %q, want %q", text, got, want)
				}
			}
		}
	}
	for _, in := range quotedInputs(100 << 10) {
		if got, want := appendQuoted(nil, in.text), quotedByEncoder(in.text); !bytes.Equal(got, want) {
			t.Errorf("%s: differs from the encoder's escaping", in.name)
		}
	}
}

func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain text of some length", `{"a":"b\\c"}`, "\u2028\x01é\xff🦜", "\xe2\x80\xa8"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if got, want := appendQuoted(nil, src), quotedByEncoder(src); !bytes.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", src, got, want)
		}
	})
}
