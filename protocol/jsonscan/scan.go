// Package jsonscan validates JSON and splits objects into members in
// single passes over the bytes, without decoding values that are only
// passed through. The bridge's payloads (tool arguments, backend results)
// are forwarded as they arrived; validating them once, quickly, is all
// they need. encoding/json remains the tool for decoding small values.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxDepth bounds nesting; deeper input is rejected rather than risking
// the stack (encoding/json's own limit is 10000).
const MaxDepth = 10000

// SyntaxError describes invalid JSON and where it was found.
type SyntaxError struct {
	Offset int
	msg    string
}

// Error says what is wrong and at which byte offset.
func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.Offset) }

// Valid checks that data holds exactly one JSON value, surrounded by
// optional white space.
func Valid(data []byte) error {
	s := scanner{data: data}
	s.skipSpace()
	if err := s.value(0); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos != len(data) {
		return s.fail("unexpected data after the top-level value")
	}
	return nil
}

type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) fail(msg string) error { return &SyntaxError{Offset: s.pos, msg: msg} }

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) error {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of JSON input")
	}
	switch c := s.data[s.pos]; {
	case c == '"':
		return s.str()
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail(fmt.Sprintf("invalid character %q looking for the beginning of a value", s.data[s.pos]))
}

func (s *scanner) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return s.fail("invalid literal")
	}
	s.pos += len(lit)
	return nil
}

func (s *scanner) object(depth int) error {
	if depth > MaxDepth {
		return s.fail("nesting too deep")
	}
	s.pos++ // {
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.fail("expected a string key")
		}
		if err := s.str(); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.fail("expected ':' after an object key")
		}
		s.pos++
		s.skipSpace()
		if err := s.value(depth); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of JSON input")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case '}':
			s.pos++
			return nil
		default:
			return s.fail("expected ',' or '}' in an object")
		}
	}
}

func (s *scanner) array(depth int) error {
	if depth > MaxDepth {
		return s.fail("nesting too deep")
	}
	s.pos++ // [
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		if err := s.value(depth); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of JSON input")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case ']':
			s.pos++
			return nil
		default:
			return s.fail("expected ',' or ']' in an array")
		}
	}
}

// str scans a string, checking escapes and control characters. Invalid
// UTF-8 is accepted, as encoding/json accepts it (it decodes to U+FFFD).
func (s *scanner) str() error {
	s.pos++ // opening quote
	for {
		s.pos += plainLen(s.data[s.pos:])
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of JSON input in a string")
		}
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			return nil
		case c < 0x20:
			return s.fail("control character in a string")
		}
		// An escape.
		if s.pos+1 >= len(s.data) {
			return s.fail("unexpected end of JSON input in a string")
		}
		switch s.data[s.pos+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.pos += 2
		case 'u':
			if s.pos+6 > len(s.data) {
				return s.fail("unexpected end of JSON input in a string")
			}
			for _, h := range s.data[s.pos+2 : s.pos+6] {
				if !isHex(h) {
					return s.fail("invalid \\u escape")
				}
			}
			s.pos += 6
		default:
			return s.fail("invalid escape in a string")
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (s *scanner) number() error {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(s.data) && s.data[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		return s.fail("invalid number")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return s.fail("invalid number")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.fail("invalid number")
		}
	}
	if s.pos == start {
		return s.fail("invalid number")
	}
	return nil
}

// ErrNotObject is returned by Object for a value that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// ErrNotArray is returned by Array for a value that is not an array.
var ErrNotArray = errors.New("not a JSON array")

// Unquote returns the text of a valid JSON string literal. It is fast for
// strings without escapes, the common case.
func Unquote(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(ValidUTF8(inner))
	}
	var b []byte
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch inner[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(inner[i+1 : i+5])
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+6 < len(inner) && inner[i+1] == '\\' && inner[i+2] == 'u' {
				if lo := hex4(inner[i+3 : i+7]); lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default: // " \ /
			b = append(b, inner[i])
		}
	}
	return string(ValidUTF8(b))
}

// ValidUTF8 returns b with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json does to strings; b itself, not a
// copy, when it is valid. Outside its strings JSON is ASCII, so cleaned
// JSON is still JSON.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// Object validates data as one JSON object, optionally surrounded by
// white space, and calls f with each member's raw key (the quoted
// literal; see Name) and raw value, a sub-slice of data, in order. It
// returns the first error f returns, ErrNotObject for another kind of
// value, or a *SyntaxError. Unlike Members it needs no prior Valid: the
// whole of data is checked in the same pass.
func Object(data []byte, f func(rawKey, value []byte) error) error {
	s := scanner{data: data}
	more, err := s.open('{', '}', ErrNotObject)
	for more && err == nil {
		if s.pos >= len(data) || data[s.pos] != '"' {
			return s.fail("expected a string key")
		}
		keyStart := s.pos
		if err := s.str(); err != nil {
			return err
		}
		key := data[keyStart:s.pos]
		s.skipSpace()
		if s.pos >= len(data) || data[s.pos] != ':' {
			return s.fail("expected ':' after an object key")
		}
		s.pos++
		s.skipSpace()
		valStart := s.pos
		if err := s.value(1); err != nil {
			return err
		}
		if err := f(key, data[valStart:s.pos]); err != nil {
			return err
		}
		more, err = s.next('}', "expected ',' or '}' in an object")
	}
	if err != nil {
		return err
	}
	return s.end()
}

// Array validates data as one JSON array, optionally surrounded by white
// space, and calls f with each element's raw value, a sub-slice of data,
// in order. It returns the first error f returns, ErrNotArray for another
// kind of value, or a *SyntaxError, checking the whole of data in the
// same pass.
func Array(data []byte, f func(value []byte) error) error {
	s := scanner{data: data}
	more, err := s.open('[', ']', ErrNotArray)
	for more && err == nil {
		start := s.pos
		if err := s.value(1); err != nil {
			return err
		}
		if err := f(data[start:s.pos]); err != nil {
			return err
		}
		more, err = s.next(']', "expected ',' or ']' in an array")
	}
	if err != nil {
		return err
	}
	return s.end()
}

// open starts Object's or Array's top-level value, which opens with
// opening: more reports a first member or element to read, false when
// closing follows at once. Another kind of value is notKind.
func (s *scanner) open(opening, closing byte, notKind error) (more bool, err error) {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return false, s.fail("unexpected end of JSON input")
	}
	if s.data[s.pos] != opening {
		return false, notKind
	}
	s.pos++
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == closing {
		s.pos++
		return false, nil
	}
	return true, nil
}

// next reads what follows a member or element of Object's or Array's
// value: a comma and more, or closing; anything else fails with want.
func (s *scanner) next(closing byte, want string) (more bool, err error) {
	s.skipSpace()
	switch {
	case s.pos >= len(s.data):
		return false, s.fail("unexpected end of JSON input")
	case s.data[s.pos] == ',':
		s.pos++
		s.skipSpace()
		return true, nil
	case s.data[s.pos] == closing:
		s.pos++
		return false, nil
	}
	return false, s.fail(want)
}

// end checks that nothing but white space follows the top-level value.
func (s *scanner) end() error {
	s.skipSpace()
	if s.pos != len(s.data) {
		return s.fail("unexpected data after the top-level value")
	}
	return nil
}

// Name returns the text of a raw key literal as Object passes it, as
// encoding/json decodes it (invalid UTF-8 becomes U+FFFD), without
// copying when it holds no escape and is valid UTF-8.
func Name(rawKey []byte) []byte {
	if inner := rawKey[1 : len(rawKey)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return ValidUTF8(inner)
	}
	return []byte(Unquote(rawKey))
}

// Compact returns valid JSON without insignificant white space: data
// itself when it has none, so compact values are shared, not copied;
// otherwise a copy of exactly the compacted size, fit to be kept.
func Compact(data []byte) ([]byte, error) {
	if hasSpace(data) {
		var b bytes.Buffer
		b.Grow(len(data))
		if err := json.Compact(&b, data); err != nil {
			return nil, err
		}
		out := make([]byte, b.Len())
		copy(out, b.Bytes())
		return out, nil
	}
	if err := Valid(data); err != nil {
		return nil, err
	}
	return data, nil
}

// hasSpace reports white space outside strings. It goes through a
// string's plain runs eight bytes at a time (see plainLen).
func hasSpace(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			return true
		case '"':
			for i++; i < len(data); i++ {
				i += plainLen(data[i:])
				if i >= len(data) || data[i] == '"' {
					break
				}
				if data[i] == '\\' {
					i++ // the escaped byte
				}
				// else a control byte: not valid JSON, but still in the string
			}
		}
	}
	return false
}
