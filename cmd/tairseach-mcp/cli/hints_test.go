package cli

import (
	"errors"
	"regexp"
	"testing"

	"github.com/tairseach/tairseach-mcp/manifest"
)

// Every limit a value can pass has a hint, and every hint names a flag
// the bridge has.
func TestHintsNameTheFlagsThatExist(t *testing.T) {
	t.Parallel()
	flags := newRootCmd(&env{}).PersistentFlags()
	flagIn := regexp.MustCompile(`--[a-z-]+`)
	named := func(hint string) {
		t.Helper()
		f := flagIn.FindString(hint)
		if f == "" || flags.Lookup(f[2:]) == nil {
			t.Errorf("hint %q names no flag of the bridge", hint)
		}
	}
	d := manifest.Limits{Depth: 1, NumberLength: 2, Size: 8}.Decoder()
	for _, value := range []string{`[[1]]`, `12345`, `"a long string"`} {
		_, err := d.Decode([]byte(value))
		var le *manifest.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("Decode(%s) = %v, want a LimitError", value, err)
		}
		named(hints.Limits[le.Limit])
	}
	named(hints.Backend)
	named(maxMessageSizeHint)
}
