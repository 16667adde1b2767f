// Package safetext makes text that anyone wrote (a client's name, a
// backend's error, a manifest's title, a file's contents) safe to show: in
// a field of a log line or an audit entry, on a terminal, in a question to
// the user, or quoted in a message. It is the one place that decides which
// characters are shown as themselves, so that the rules cannot drift apart
// between a terminal, a log and a question.
//
// A character is unsafe when showing it could do more than show a glyph:
// C0 and C1 control characters (ESC starts the sequences that recolour,
// move or retitle a terminal; a line break starts a line of its own),
// Unicode's bidirectional formatting characters (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069, which reorder what is shown around them),
// the line and paragraph separators U+2028 and U+2029, and bytes that are
// not UTF-8. Which of them each function keeps, and how it shows the
// others, depends on where the text goes:
//
//   - Field: one field of a record (log, audit entry), bounded in bytes;
//     unsafe characters are replaced by U+FFFD.
//   - Line: one line a person reads (a table cell, a value in a question);
//     unsafe characters are escaped as Go writes them ("\n", "\x1b",
//     "\u202e"), so the person sees what was there.
//   - Text: text a person reads whole (a resource, a question): as Line,
//     but line breaks and tabs are kept.
//   - Cut and Quote shorten a value that a message names.
//
// Every function is safe for concurrent use.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks where text was cut.
const Ellipsis = "…"

// Cut returns s when it is at most max bytes long, else the longest
// prefix of s of at most max bytes that ends between two characters,
// followed by Ellipsis: max bounds how much of s is shown, the mark
// comes after. It changes no character (a caller quotes, escapes or
// encodes what it shows) and never splits a valid UTF-8 sequence; a byte
// that is not UTF-8 counts as a character of its own. It costs O(max),
// however long s is.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:prefix(s, max)] + Ellipsis
}

// prefix returns the length of the longest prefix of s of at most max
// bytes that ends between two characters.
func prefix(s string, max int) int {
	n := 0
	for n < len(s) {
		_, w := utf8.DecodeRuneInString(s[n:])
		if n+w > max {
			break
		}
		n += w
	}
	return n
}

// Quote returns the first max bytes of s (as Cut shortens it) as a
// double-quoted Go string literal, with Ellipsis after the closing quote
// when s was cut: for a message that names a value, such as "…" is not
// valid. Unsafe characters, and any other that is not printable, are
// escaped as strconv.Quote escapes them.
func Quote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:prefix(s, max)]) + Ellipsis
}

// Field returns s fit for one field of a record, such as a log line or an
// audit entry, and for a terminal that shows it: at most max bytes
// (Ellipsis included, after the last whole character that fits), valid
// UTF-8, on one line, with every unsafe character, line breaks and tabs
// included, replaced by U+FFFD (each byte that is not UTF-8 by one). It
// returns "" when s must be cut and max leaves no room for Ellipsis. It
// costs O(max), however long s is.
func Field(s string, max int) string {
	if len(s) <= max && utf8.ValidString(s) && !strings.ContainsFunc(s, unsafe) {
		return s
	}
	b := make([]byte, 0, min(len(s), max))
	for _, r := range s { // a byte that is not UTF-8 is utf8.RuneError
		if unsafe(r) {
			r = utf8.RuneError
		}
		if len(b)+utf8.RuneLen(r) > max {
			if max < len(Ellipsis) {
				return ""
			}
			for len(b) > max-len(Ellipsis) {
				_, n := utf8.DecodeLastRune(b)
				b = b[:len(b)-n]
			}
			return string(b) + Ellipsis
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// Line returns s fit to show on one line of a terminal or of a question
// to the user: every unsafe character, line breaks and tabs included, is
// written as a Go escape ("\n", "\t", "\x1b", "\u009b", "\u202e",
// "\u2028"), and each byte that is not UTF-8 as "\xff"; everything else,
// U+FFFD included, is kept. A value shown this way cannot draw a line of
// its own nor rearrange the text around it. s is returned as it is when
// nothing needs escaping.
func Line(s string) string { return escape(s, false) }

// Text returns s fit for a person to read whole, on a terminal or in a
// question to the user: as Line, but "\n" and "\t" are kept, so the text
// keeps its lines and columns, and no other line break is shown as one.
func Text(s string) string { return escape(s, true) }

// escape writes the unsafe characters of s as Go escapes, but for "\n"
// and "\t" when keepBreaks.
func escape(s string, keepBreaks bool) string {
	shown := func(r rune) bool { return keepBreaks && (r == '\n' || r == '\t') }
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return unsafe(r) && !shown(r) }) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case unsafe(r) && !shown(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

const hex = "0123456789abcdef"

// unsafe reports whether showing r could do more than show a glyph: a
// control character, a bidirectional formatting character, or a line or
// paragraph separator. Bytes that are not UTF-8 are the callers' to find.
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
