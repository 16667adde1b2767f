package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// classes are the kinds of character the policy tells apart, each with
// what Field, Line and Text make of it.
var classes = []struct {
	name, in          string
	field, line, text string
}{
	{"plain ASCII is kept", "notes.create", "notes.create", "notes.create", "notes.create"},
	{"letters of any script are kept", "héllo wörld 世界", "héllo wörld 世界", "héllo wörld 世界", "héllo wörld 世界"},
	{"emoji joined by ZWJ are kept", "👩\u200d💻 ✓", "👩\u200d💻 ✓", "👩\u200d💻 ✓", "👩\u200d💻 ✓"},
	{"a real U+FFFD is kept", "real \uFFFD", "real \uFFFD", "real \uFFFD", "real \uFFFD"},
	{"a newline", "a\nb", "a\uFFFDb", `a\nb`, "a\nb"},
	{"a tab", "a\tb", "a\uFFFDb", `a\tb`, "a\tb"},
	{"a carriage return", "a\r\nb", "a\uFFFD\uFFFDb", `a\r\nb`, "a\\r\nb"},
	{"an ANSI escape sequence", "red\x1b[31mtext", "red\uFFFD[31mtext", `red\x1b[31mtext`, `red\x1b[31mtext`},
	{"an OSC that retitles the terminal", "\x1b]0;pwned\a", "\uFFFD]0;pwned\uFFFD", `\x1b]0;pwned\a`, `\x1b]0;pwned\a`},
	{"NUL and DEL", "a\x00b\x7f", "a\uFFFDb\uFFFD", `a\x00b\x7f`, `a\x00b\x7f`},
	{"C1 controls: CSI and next line", "c1 \u009b2J \u0085", "c1 \uFFFD2J \uFFFD", `c1 \u009b2J \u0085`, `c1 \u009b2J \u0085`},
	{"a bidi override", "abc\u202edcba", "abc\uFFFDdcba", `abc\u202edcba`, `abc\u202edcba`},
	{"bidi embeddings and pop", "\u202a\u202b\u202c\u202d", "\uFFFD\uFFFD\uFFFD\uFFFD", `\u202a\u202b\u202c\u202d`, `\u202a\u202b\u202c\u202d`},
	{"bidi isolates", "\u2066\u2067\u2068\u2069", "\uFFFD\uFFFD\uFFFD\uFFFD", `\u2066\u2067\u2068\u2069`, `\u2066\u2067\u2068\u2069`},
	{"bidi marks", "\u200e\u200f\u061c", "\uFFFD\uFFFD\uFFFD", `\u200e\u200f\u061c`, `\u200e\u200f\u061c`},
	{"line and paragraph separators", "a\u2028b\u2029c", "a\uFFFDb\uFFFDc", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
	{"bytes that are not UTF-8, one by one", "bad\xff\xfeend", "bad\uFFFD\uFFFDend", `bad\xff\xfeend`, `bad\xff\xfeend`},
	{"a sequence cut short", "x\xe4\xb8", "x\uFFFD\uFFFD", `x\xe4\xb8`, `x\xe4\xb8`},
	{"an encoded surrogate", "\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", `\xed\xa0\x80`, `\xed\xa0\x80`},
	{"a backslash is not escaped", `C:\new`, `C:\new`, `C:\new`, `C:\new`},
}

func TestFieldReplacesEveryUnsafeCharacter(t *testing.T) {
	t.Parallel()
	for _, tc := range classes {
		t.Run(tc.name, func(t *testing.T) {
			if got := Field(tc.in, 128); got != tc.field {
				t.Errorf("Field(%q, 128) = %q, want %q", tc.in, got, tc.field)
			}
		})
	}
}

func TestLineEscapesEveryUnsafeCharacter(t *testing.T) {
	t.Parallel()
	for _, tc := range classes {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
		})
	}
}

func TestTextKeepsLineBreaksAndTabsAndEscapesTheRest(t *testing.T) {
	t.Parallel()
	for _, tc := range classes {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
		})
	}
}

func TestFieldIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"text at the bound is kept", "abcdef", 6, "abcdef"},
		{"long text is cut and marked within the bound", strings.Repeat("a", 300), 10, "aaaaaaa…"},
		{"a cut never splits a character", "ééééé", 6, "é…"},
		{"a replacement counts its three bytes", "\xff\xff\xff", 6, "\uFFFD…"},
		{"a bound with no room for the mark gives nothing", "abcdef", 2, ""},
		{"text within a bound too small for the mark is kept", "ab", 2, "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Field(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("Field(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if len(got) > tc.max || !utf8.ValidString(got) {
				t.Errorf("Field(%q, %d) = %q: %d bytes, valid UTF-8 %v", tc.in, tc.max, got, len(got), utf8.ValidString(got))
			}
		})
	}
}

func TestCutShowsAtMostMaxBytesOfTheText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"short text is kept", "short", 64, "short"},
		{"text at the bound is kept", "abcdef", 6, "abcdef"},
		{"long text is cut and marked", "abcdefg", 6, "abcdef…"},
		{"a cut never splits a character", strings.Repeat("x", 62) + "世界", 64, strings.Repeat("x", 62) + "…"},
		{"characters are not changed", "a\nb\x1b[0mcdef", 6, "a\nb\x1b[0…"},
		{"a byte that is not UTF-8 is a character", "\xff\xfe\xfd", 2, "\xff\xfe…"},
		{"nothing fits in no bytes", "abc", 0, "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cut(tc.in, tc.max); got != tc.want {
				t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}

func TestQuoteNamesTheStartOfAValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"a short value is quoted", "2024-02-29", 40, `"2024-02-29"`},
		{"a long value is cut, the mark outside the quotes", strings.Repeat("a", 50), 40, `"` + strings.Repeat("a", 40) + `"…`},
		{"a cut never splits a character", "aé", 2, `"a"…`},
		{"controls and bidi are escaped", "a\n\x1b\u202e\u2028", 40, `"a\n\x1b\u202e\u2028"`},
		{"bytes that are not UTF-8 are escaped", "a\xff", 40, `"a\xff"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quote(tc.in, tc.max); got != tc.want {
				t.Errorf("Quote(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}

// A value shown with Line inside a question that Text shows cannot draw
// a line of its own, nor reorder the question's text.
func TestAValueCannotForgeALineOfAQuestion(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"x\nAllowed: yes", "x\r\nAllowed: yes", "x\u2028Allowed: yes", "x\u0085Allowed: yes", "x\x1b[1AAllowed: yes", "x\u202eAllowed: yes"} {
		q := Text("Allow it?\nvalue: " + Line(v))
		if lines := strings.Split(q, "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "value: x\\") {
			t.Errorf("value %q: question %q, want two lines, the value escaped", v, q)
		}
	}
}

func BenchmarkField(b *testing.B) {
	clean := strings.Repeat("Claude Desktop ", 8)
	dirty := strings.Repeat("evil\x1b[2J\u202e ", 8)
	huge := strings.Repeat("x", 1<<20)
	for _, bc := range []struct{ name, in string }{{"clean", clean}, {"dirty", dirty}, {"huge", huge}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Field(bc.in, 128)
			}
		})
	}
}
