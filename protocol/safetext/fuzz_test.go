package safetext

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// shownAsItself is the policy written out again, independently of
// unsafe: what may reach a screen raw.
func shownAsItself(r rune) bool {
	return !unicode.In(r, unicode.Cc, unicode.Bidi_Control, unicode.Zl, unicode.Zp)
}

func FuzzPolicy(f *testing.F) {
	for _, tc := range classes {
		f.Add(tc.in, 8)
	}
	f.Add(strings.Repeat("é", 100), 64)
	f.Add("\x1b[31m\u202e\n\xff", 3)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max % 512
		if max < 0 {
			max = -max
		}

		field := Field(s, max)
		if !utf8.ValidString(field) || strings.ContainsFunc(field, func(r rune) bool { return !shownAsItself(r) }) {
			t.Fatalf("Field(%q, %d) = %q: not valid UTF-8, or not every character shown as itself", s, max, field)
		}
		if len(field) > max {
			t.Fatalf("Field(%q, %d) = %q: %d bytes", s, max, field, len(field))
		}
		if again := Field(field, max); again != field {
			t.Fatalf("Field is not idempotent: %q, then %q", field, again)
		}

		for name, fn := range map[string]func(string) string{"Line": Line, "Text": Text} {
			got := fn(s)
			kept := func(r rune) bool { return name == "Text" && (r == '\n' || r == '\t') }
			if !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool { return !shownAsItself(r) && !kept(r) }) {
				t.Fatalf("%s(%q) = %q: not valid UTF-8, or not every character shown as itself", name, s, got)
			}
			if again := fn(got); again != got {
				t.Fatalf("%s is not idempotent: %q, then %q", name, got, again)
			}
			if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !shownAsItself(r) && !kept(r) }) && got != s {
				t.Fatalf("%s(%q) = %q, changed text that was safe", name, s, got)
			}
		}
		if got := Text(s); strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Text(%q) = %q: lines added or lost", s, got)
		}

		cut := Cut(s, max)
		shown, marked := strings.CutSuffix(cut, Ellipsis)
		switch {
		case cut == s:
		case !marked || !strings.HasPrefix(s, shown) || len(shown) > max:
			t.Fatalf("Cut(%q, %d) = %q: want at most %d bytes of s, then %q", s, max, cut, max, Ellipsis)
		case utf8.ValidString(s) && !utf8.ValidString(cut):
			t.Fatalf("Cut(%q, %d) = %q splits a character", s, max, cut)
		}

		quoted := Quote(s, max)
		lit, _ := strings.CutSuffix(quoted, Ellipsis)
		if v, err := strconv.Unquote(lit); err != nil || !strings.HasPrefix(s, v) || len(v) > max && v != s {
			t.Fatalf("Quote(%q, %d) = %q: not a literal of at most %d bytes of s (%v)", s, max, quoted, max, err)
		}
		if !utf8.ValidString(quoted) || strings.ContainsFunc(quoted, func(r rune) bool { return !shownAsItself(r) }) {
			t.Fatalf("Quote(%q, %d) = %q shows a character that is not safe", s, max, quoted)
		}
	})
}
