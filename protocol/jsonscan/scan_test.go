package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `{"a":1}`, ` {"a" : [1, 2.5e-3, -0, true, false, null, "x\n\u00e9\ud83d\ude00"]} `,
		`"\u12"`, `{"a":}`, `[1,]`, `{"a":1,}`, `01`, `1.`, `-`, `1e`, `tru`, `nul`, `"abc`, "\"a\tb\"", `{"a" 1}`, `{1:2}`,
		`[1] [2]`, ``, ` `, `"\x"`, "\"\xff\"", `{"a":"b"}x`, `1E+5`, `-12.5E-7`, `[[[]]]`, `{"":""}`,
	} {
		want := json.Valid([]byte(in))
		got := Valid([]byte(in)) == nil
		if got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", in, got, want)
		}
	}
}

func TestDepthIsBounded(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if err := Valid([]byte(deep)); err == nil || !strings.Contains(err.Error(), "too deep") {
		t.Errorf("Valid(deep) = %v", err)
	}
}

func TestObject(t *testing.T) {
	var got []string
	err := Object([]byte(` { "a" : 1 , "b\u0041":{"x":[1,"}"]}, "c":"\"q\""} `), func(k, v []byte) error {
		got = append(got, string(Name(k))+"="+string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `a=1|bA={"x":[1,"}"]}|c="\"q\""`
	if strings.Join(got, "|") != want {
		t.Errorf("members = %q, want %q", strings.Join(got, "|"), want)
	}
	if err := Object([]byte(`[1]`), func(k, v []byte) error { return nil }); err != ErrNotObject {
		t.Errorf("Object(array) = %v", err)
	}
	if err := Object([]byte(`{"a":1} {}`), func(k, v []byte) error { return nil }); err == nil {
		t.Error("Object accepted trailing data")
	}
}

func TestArray(t *testing.T) {
	var got []string
	err := Array([]byte(` [ 1 , {"a":[1,"]"]},"\"q\"" ,[], null] `), func(v []byte) error {
		got = append(got, string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `1|{"a":[1,"]"]}|"\"q\""|[]|null`
	if strings.Join(got, "|") != want {
		t.Errorf("elements = %q, want %q", strings.Join(got, "|"), want)
	}
	n := 0
	if err := Array([]byte(` [ ] `), func(v []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("Array(empty) = %v after %d elements", err, n)
	}
	if err := Array([]byte(`{"a":1}`), func(v []byte) error { return nil }); err != ErrNotArray {
		t.Errorf("Array(object) = %v", err)
	}
	for _, bad := range []string{`[1] []`, `[1,]`, `[,1]`, `[1 2]`, `[`, ``} {
		if err := Array([]byte(bad), func(v []byte) error { return nil }); err == nil || err == ErrNotArray {
			t.Errorf("Array(%q) = %v, want a syntax error", bad, err)
		}
	}
}

func FuzzArray(f *testing.F) {
	for _, s := range []string{`[1,"a",[2,{"c":null}]]`, ` [] `, `[1,]`, `{"a":1}`, `[1] x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []string
		err := Array(data, func(v []byte) error {
			got = append(got, string(v))
			return nil
		})
		var want []json.RawMessage
		jerr := json.Unmarshal(data, &want)
		isArray := jerr == nil && want != nil
		if (err == nil) != isArray {
			t.Fatalf("Array(%q) error %v, encoding/json %v", data, err, jerr)
		}
		if err != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("Array(%q) has %d elements, encoding/json %d", data, len(got), len(want))
		}
		for i := range got {
			if got[i] != string(want[i]) {
				t.Fatalf("element %d of %q is %q, encoding/json has %q", i, data, got[i], want[i])
			}
		}
	})
}

func TestUnquoteAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, "\"\xff\""} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if got := Unquote([]byte(in)); got != want {
			t.Errorf("Unquote(%s) = %q, want %q", in, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c\u0041"}]}`, `[1e5,-0.5,true,null]`, `"\ud83d\ude00"`, `{"a":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if (Valid(data) == nil) != json.Valid(data) {
			t.Fatalf("Valid(%q) disagrees with encoding/json", data)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"data":"` + strings.Repeat("x", 64<<10) + `"}}}`)
	b.SetBytes(int64(len(data)))
	b.Run("jsonscan", func(b *testing.B) {
		for b.Loop() {
			if Valid(data) != nil {
				b.Fatal()
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if !json.Valid(data) {
				b.Fatal()
			}
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,{"b":"c\u0041"}],"d":true,"e":null}`, `"x"`, `[{}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Decode(data)
		if (err == nil) != json.Valid(data) {
			t.Fatalf("Decode(%q) error %v disagrees with encoding/json", data, err)
		}
		if err != nil {
			return
		}
		d := json.NewDecoder(strings.NewReader(string(data)))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Fatalf("Decode(%q) = %s, encoding/json gives %s", data, gb, wb)
		}
	})
}

func FuzzObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b\u0041":[2,{"c":null}]}`, ` {} `, `{"a":}`, `[1]`, `{"a":1} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var keys []string
		err := Object(data, func(k, v []byte) error {
			if !json.Valid(v) {
				t.Fatalf("value %q is not valid JSON", v)
			}
			keys = append(keys, string(Name(k)))
			return nil
		})
		var m map[string]json.RawMessage
		jerr := json.Unmarshal(data, &m)
		isObject := jerr == nil && m != nil
		if (err == nil) != isObject {
			t.Fatalf("Object(%q) error %v, encoding/json %v", data, err, jerr)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok && err == nil {
				t.Fatalf("key %q not found by encoding/json in %q", k, data)
			}
		}
	})
}

func TestCompact(t *testing.T) {
	for _, in := range []string{
		`{"a":[1,2,{"b":"c d"}]}`,
		"{\n  \"a\": [1, 2],\t\"b\": \"x \\\" y\\\\\"\r\n}",
		`"only a string with spaces"`,
		` 1 `,
		`{"k":"\\"}`,
	} {
		data := []byte(in)
		got, err := Compact(data)
		var want bytes.Buffer
		if werr := json.Compact(&want, []byte(in)); werr != nil || err != nil {
			t.Fatalf("Compact(%q): %v; encoding/json: %v", in, err, werr)
		}
		if string(got) != want.String() {
			t.Errorf("Compact(%q) = %q, want %q", in, got, want.String())
		}
		if &got[0] != &data[0] && cap(got) != len(got) {
			t.Errorf("Compact(%q) keeps %d bytes for %d", in, cap(got), len(got))
		}
	}
	compact := []byte(`{"a":"b c"}`)
	if got, _ := Compact(compact); &got[0] != &compact[0] {
		t.Error("Compact copied JSON that was compact already")
	}
	if _, err := Compact([]byte(`{"a":`)); err == nil {
		t.Error("Compact accepted invalid JSON")
	}
	if _, err := Compact([]byte(`{"a": `)); err == nil {
		t.Error("Compact accepted invalid JSON with white space")
	}
}

// FuzzCompact holds Compact to encoding/json's Compact.
func FuzzCompact(f *testing.F) {
	for _, s := range []string{"{\n \"a\": [1, 2] }", `{"a":"b c"}`, "\"x \\\" y\"", ` {"a" :1,}`, "[\"\\\\\", 1 ]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := hasSpace(data), hasSpaceBytewise(data); got != want {
			t.Fatalf("hasSpace(%q) = %v, a byte at a time %v", data, got, want)
		}
		got, err := Compact(data)
		var want bytes.Buffer
		werr := json.Compact(&want, data)
		if (err == nil) != (werr == nil) {
			t.Fatalf("Compact(%q) error %v, encoding/json says %v", data, err, werr)
		}
		if err == nil && string(got) != want.String() {
			t.Fatalf("Compact(%q) = %q, want %q", data, got, want.String())
		}
	})
}

// hasSpaceBytewise is hasSpace's definition, a byte at a time.
func hasSpaceBytewise(data []byte) bool {
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return true
		}
	}
	return false
}

// TestHasSpaceEveryByte puts every byte value at every place of a string
// that straddles the eight-byte words, followed by a space or not.
func TestHasSpaceEveryByte(t *testing.T) {
	for pre := 0; pre < 9; pre++ {
		for pos := 0; pos < 18; pos++ {
			for c := range 256 {
				for _, tail := range []string{"", " ", `" `, `\" `, `"x`} {
					s := []byte(`[` + strings.Repeat("1", pre) + `"` + strings.Repeat("a", 18) + `"` + tail)
					s[2+pre+pos] = byte(c)
					if got, want := hasSpace(s), hasSpaceBytewise(s); got != want {
						t.Fatalf("hasSpace(%q) = %v, a byte at a time %v", s, got, want)
					}
				}
			}
		}
	}
}
