package protocol

import (
	"bufio"
	"unicode/utf8"

	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; unlike encoding/json it leaves <, > and & alone, since
// the output is never embedded in HTML.
func appendString[T string | []byte](buf []byte, s T) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if i += jsonscan.PlainASCII(s[i:]); i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript line splitting.
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// writeString writes s as a JSON string, exactly as appendString would,
// escaping it a piece at a time through scratch, which it returns for
// reuse: a large string is never copied whole. Pieces end where a
// character starts, so none is split.
func writeString[T string | []byte](w *bufio.Writer, s T, scratch []byte) []byte {
	w.WriteByte('"')
	for len(s) > 0 {
		n := min(len(s), 16<<10)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		scratch = appendString(scratch[:0], s[:n])
		w.Write(scratch[1 : len(scratch)-1])
		s = s[n:]
	}
	w.WriteByte('"')
	return scratch
}

// bigPart is the size from which jsonOut keeps a text or a raw value as
// a part of its own instead of copying it into the buffer.
const bigPart = 32 << 10

// jsonOut is where an encoder writes: buf, and, when parts is set, large
// texts and raw values as parts of their own, so a response carrying a
// large result is written without a line of its whole size (parts).
type jsonOut struct {
	buf   []byte
	parts *respParts
}

// text writes a text as a JSON string: b, or s when b is nil.
func (o *jsonOut) text(s string, b []byte) {
	if o.parts == nil || len(s)+len(b) < bigPart {
		if b != nil {
			o.buf = appendString(o.buf, b)
		} else {
			o.buf = appendString(o.buf, s)
		}
		return
	}
	o.cut()
	o.parts.segs = append(o.parts.segs, respSeg{raw: b, str: s, escape: true})
}

// raw writes b, JSON already, as it is.
func (o *jsonOut) raw(b []byte) {
	if o.parts == nil || len(b) < bigPart {
		o.buf = append(o.buf, b...)
		return
	}
	o.cut()
	o.parts.segs = append(o.parts.segs, respSeg{raw: b})
}

// cut ends the buffered part.
func (o *jsonOut) cut() {
	if len(o.buf) > 0 {
		o.parts.segs = append(o.parts.segs, respSeg{raw: o.buf})
	}
	o.buf = nil
}

// respParts is a response line in parts: raw bytes, shared with the
// result they came from, and strings the writer escapes as it writes.
type respParts struct {
	segs []respSeg
}

// respSeg is raw, written as it is, or, with escape set, a text (str, or
// raw when that is not nil) written as a JSON string.
type respSeg struct {
	raw    []byte
	str    string
	escape bool
}

// writeTo writes the line and its newline; scratch is writeString's.
func (p *respParts) writeTo(w *bufio.Writer, scratch []byte) ([]byte, error) {
	for _, sg := range p.segs {
		switch {
		case !sg.escape:
			w.Write(sg.raw)
		case sg.raw != nil:
			scratch = writeString(w, sg.raw, scratch)
		default:
			scratch = writeString(w, sg.str, scratch)
		}
	}
	return scratch, w.WriteByte('\n') // a bufio.Writer's error sticks: this reports any
}
