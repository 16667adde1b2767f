package manifest

import (
	"errors"
	"strings"
	"testing"
)

// Values past the limits are refused as they are decoded, before the
// schema library can spend seconds on them; values within pass.
func TestDecodeStopsAtTheLimits(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	lim := Limits{Depth: 10, NumberLength: 20, Size: 5000}
	for _, tc := range []struct {
		name, value, limit string
	}{
		{"a value just deep enough", deep(10), ""},
		{"a value one level too deep", deep(11), "depth"},
		{"an object too deep", strings.Repeat(`{"a":`, 11) + "1" + strings.Repeat("}", 11), "depth"},
		{"2,000 levels", deep(2000), "depth"},
		{"a long enough number", `{"n":` + strings.Repeat("9", 20) + `}`, ""},
		{"a number too long", `{"n":` + strings.Repeat("9", 21) + `}`, "number length"},
		{"a number of 2,000,000 digits", `[` + strings.Repeat("9", 2_000_000) + `]`, "size"},
		{"too large", `"` + strings.Repeat("a", 5000) + `"`, "size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := lim.Decoder().decode([]byte(tc.value))
			var le *LimitError
			switch {
			case tc.limit == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.limit != "" && (!errors.As(err, &le) || le.Limit != tc.limit):
				t.Errorf("err = %v, want the %s limit", err, tc.limit)
			}
		})
	}
}

func TestDecodeDefaultsBoundDepthAndNumberLength(t *testing.T) {
	for _, v := range []string{
		strings.Repeat("[", DefaultDepth+1) + strings.Repeat("]", DefaultDepth+1),
		"[" + strings.Repeat("1", DefaultNumberLength+1) + "]",
	} {
		if _, err := decodeValue([]byte(v)); err == nil {
			t.Errorf("decodeValue(%.20s…) passed", v)
		}
	}
}

// A manifest nested past the depth limit is refused where it is, before
// its schemas are compiled (400 levels took the schema library seconds).
func TestAManifestNestedTooDeepIsRefused(t *testing.T) {
	deep := strings.Repeat("[", 400) + "1" + strings.Repeat("]", 400)
	data := `{"id":"x","tools":[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"p":{"const":` + deep + `}}}}],"implementation":{"methods":{"a":"a"}}}`
	m, problems := Parse("deep.json", []byte(data))
	if m == nil || !m.Tools[0].Broken || !HasErrors(problems) || !strings.Contains(problems[0].Message, "nested deeper than the 64 levels") {
		t.Errorf("problems = %v", problems)
	}
}
