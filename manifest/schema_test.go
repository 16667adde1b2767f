package manifest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeValue(t *testing.T) {
	for _, tt := range []struct {
		name, data string
		want       any
		err        string // a substring of the error; "" for none
	}{
		{name: "numbers stay as written, as json.Number", data: `{"a":[1,-2.50,1e400,{"b":-0}],"c":null,"d":"x","e":true}`,
			want: map[string]any{"a": []any{json.Number("1"), json.Number("-2.50"), json.Number("1e400"), map[string]any{"b": json.Number("-0")}}, "c": nil, "d": "x", "e": true}},
		{name: "a number alone", data: ` 42 `, want: json.Number("42")},
		{name: "escapes are decoded", data: `{"a\u002eb":"tab\there \ud83d\ude00"}`, want: map[string]any{"a.b": "tab\there 😀"}},
		{name: "a repeated name is refused", data: `{"a":1,"a":1}`, err: "duplicate object member name"},
		{name: "a repeated name deep down is refused", data: `[{"x":{"a":1,"a":2}}]`, err: "duplicate object member name"},
		{name: "invalid UTF-8 is refused", data: "\"\xff\"", err: "invalid UTF-8"},
		{name: "data after the value is refused", data: `{} {}`, err: "after top-level value"},
		{name: "nothing is refused", data: ``, err: "unexpected EOF"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeValue([]byte(tt.data))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("decodeValue(%s) = %v, %v; want an error with %q", tt.data, got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decodeValue(%s) (-want +got):\n%s", tt.data, diff)
			}
		})
	}
}

// decodeValue decodes one JSON value within the default Limits.
func decodeValue(data []byte) (any, error) {
	v, _, err := defaultDecoder.decode(data)
	return v, err
}

// FuzzDecodeValue holds decodeValue to encoding/json with UseNumber, which
// accepts more (repeated names, invalid UTF-8) but must agree on the rest.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.50,1e400,{"b":-0}],"c":null,"d":"x","e":true}`, `{"a":1,"a":1}`, "\"\xff\"", `"\u00e9\ud800"`, `[[[]]]`, `{} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeValue(data)
		if err != nil {
			return
		}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("decodeValue accepts %q, encoding/json does not: %v", data, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decodeValue(%q) differs from encoding/json (-want +got):\n%s", data, diff)
		}
	})
}
