package cli

import (
	"errors"
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
)

// Every limit a value can pass that a flag sets has a hint, and every
// hint names a flag the bridge has.
func TestHintsNameTheFlagsThatExist(t *testing.T) {
	t.Parallel()
	flags := newRootCmd(&env{}).Flags()
	flagIn := regexp.MustCompile(`--[a-z-]+`)
	named := func(hint string) {
		t.Helper()
		f := flagIn.FindString(hint)
		if f == "" || flags.Lookup(f[2:]) == nil {
			t.Errorf("hint %q names no flag of the bridge", hint)
		}
	}
	schema, _, err := manifest.CompileSchemas(&manifest.Tool{InputSchema: jsontext.Value(`{"type":"object"}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := manifest.Limits{Depth: 1, NumberLength: 2, Size: 16, Values: 3}.Decoder()
	var limits []string
	for _, value := range []string{`[[1]]`, `12345`, `"a long string here"`, `[1,2,3,4]`} {
		_, err := schema.Check(t.Context(), d, []byte(value))
		var le *manifest.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("Check(%s) = %v, want a LimitError", value, err)
		}
		limits = append(limits, le.Limit)
		named(hints.Limits[le.Limit])
	}
	// The bound on a check's work has no flag, so no hint.
	if keys := slices.Sorted(maps.Keys(hints.Limits)); !slices.Equal(keys, slices.Sorted(slices.Values(limits))) {
		t.Errorf("hints for %v, but the limits with a flag are %v", keys, limits)
	}
	named(hints.Backend)
	named(maxMessageSizeHint)
}
