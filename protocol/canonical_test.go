package protocol

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestCanonicalFormsAreExact(t *testing.T) {
	same := [][]string{
		{`1`, `1.0`, `1e0`, `10e-1`, `0.1e1`, `1.000E+0`, `100e-2`},
		{`0`, `-0`, `0.0`, `0e10`, `-0.000e-7`},
		{`-1.23`, `-123e-2`, `-0.0123e2`},
		{`1e400`, `10e399`, `1.0e400`},
		{`{"a":1,"b":[true,null,"x"]}`, ` { "b" : [ true , null , "x" ] , "a" : 1.0 } `},
		{`{"é":"\u00e9"}`, `{"\u00e9":"é"}`},
		{`"a\/b"`, `"a/b"`},
	}
	for _, group := range same {
		want, err := canonical(jsontext.Value(group[0]))
		if err != nil {
			t.Fatalf("%s: %v", group[0], err)
		}
		for _, v := range group[1:] {
			if got, err := canonical(jsontext.Value(v)); err != nil || string(got) != string(want) {
				t.Errorf("canonical(%s) = %s, %v; want %s, as for %s", v, got, err, want, group[0])
			}
		}
	}
	differ := [][2]string{
		{`9007199254740992`, `9007199254740993`},
		{`1`, `1.0000000000000001`},
		{`0.1`, `0.10000000000000001`},
		{`1e400`, `1e401`},
		{`-1`, `1`},
		{`1`, `"1"`},
		{`[1,2]`, `[2,1]`},
		{`{"a":1}`, `{"a":1,"b":null}`},
	}
	for _, d := range differ {
		a, errA := canonical(jsontext.Value(d[0]))
		b, errB := canonical(jsontext.Value(d[1]))
		if errA != nil || errB != nil || string(a) == string(b) {
			t.Errorf("%s and %s: canonical forms %s and %s (%v, %v), want two", d[0], d[1], a, b, errA, errB)
		}
	}
	for _, bad := range []string{``, `{`, `[1,]`, `1 2`, `{"a":1,"a":2}`} {
		if got, err := canonical(jsontext.Value(bad)); err == nil {
			t.Errorf("canonical(%q) = %s, want an error", bad, got)
		}
	}
}

// An exponent of a million digits costs its length, not its value.
func TestCanonicalNumbersCostTheirLength(t *testing.T) {
	n := "1e" + strings.Repeat("9", 1_000_000)
	got, err := canonical(jsontext.Value(n))
	if err != nil || len(got) != len(n) {
		t.Errorf("canonical of a long exponent: %d bytes, %v", len(got), err)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.50,"x"],"b":{"c":null}}`, `-0.0e-0`, `1E+400`, `"\ud83d\ude00"`, `[[],{}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := canonical(jsontext.Value(b))
		if err != nil {
			return
		}
		if !jsontext.Value(c).IsValid() {
			t.Fatalf("canonical(%q) = %q, not valid JSON", b, c)
		}
		again, err := canonical(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("canonical(%q) = %q, then %q (%v)", b, c, again, err)
		}
		indented := jsontext.Value(append([]byte(nil), b...))
		if indented.Indent() == nil {
			if ci, err := canonical(indented); err != nil || string(ci) != string(c) {
				t.Fatalf("indenting %q changed its canonical form: %q, %q", b, c, ci)
			}
		}
	})
}
