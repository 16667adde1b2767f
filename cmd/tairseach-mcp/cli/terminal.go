package cli

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable returns s safe to show on a terminal: control characters
// (escape sequences could recolour, move or retitle the terminal), bidi
// controls (which reorder what is shown) and invalid UTF-8 are written
// as Go escapes. Manifests, file names and backend methods are anyone's
// text; nothing from them reaches a terminal raw.
func printable(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			b.WriteString(strings.Trim(fmt.Sprintf("%+q", r), "'"))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// plural returns "1 warning", "2 warnings", "0 warnings".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
