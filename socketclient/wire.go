package socketclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// appendRequest appends one request line to b. params go out byte for byte
// (the 64 KiB argument path must not be re-encoded) and are left out when
// empty, since a method without parameters may reject "params": {}. The
// one exception: valid JSON may carry newlines as whitespace, which would
// split the frame, so params holding a newline are compacted first.
func appendRequest(b []byte, id uint64, method string, params []byte) ([]byte, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		params = nil
	} else if bytes.IndexByte(params, '\n') >= 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, params); err != nil {
			return b, fmt.Errorf("params are not valid JSON: %w", err)
		}
		params = c.Bytes()
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}', '\n'), nil
}

// appendString appends s as a JSON string. Method names are plain ASCII in
// practice; anything else takes encoding/json's path.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// idMatches reports whether a reply's raw id is the integer we sent. The
// literal is compared as it is: ids go out as plain decimal integers, and a
// backend echoes them unchanged.
func idMatches(raw []byte, id uint64) bool {
	var buf [20]byte
	return string(raw) == string(strconv.AppendUint(buf[:0], id, 10))
}

// reply is one line from the backend, parsed. Its slices alias the line.
type reply struct {
	// notification is set for a message with a method and no id, which
	// the caller skips. The other fields are then unset.
	notification bool
	// id is the raw id literal; nil when absent.
	id []byte
	// result is the raw result when the line is a success (possibly
	// "null"); nil otherwise.
	result []byte
	// err is the error object when the line is a failure; nil otherwise.
	err *RPCError
}

// maxDepth bounds nesting, as encoding/json does, so that a line of
// brackets cannot exhaust the stack.
const maxDepth = 10000

// parseReply parses one reply line (without its newline) in a single pass
// that also validates all of it as JSON: a line encoding/json would reject
// is rejected. On success either notification is set, or exactly one of
// result and err is. Member names match exactly (encoding/json would also
// match "RESULT"). An "error": null beside a result is read as no error, as
// JSON-RPC 1.0 servers send it, and "jsonrpc" is not checked: neither
// makes the answer ambiguous. A repeated id, result, error or method is an
// error rather than a guess at which one counts.
func parseReply(line []byte) (reply, error) {
	s := scanner{b: line}
	s.skipSpace()
	switch {
	case s.i == len(s.b):
		return reply{}, errors.New("empty line")
	case s.b[s.i] != '{':
		return reply{}, fmt.Errorf("not a JSON object: starts with %q", s.b[s.i])
	}
	var (
		r                                 reply
		hasID, hasResult, hasErr, hasMeth bool
		errRaw                            []byte
	)
	err := s.members(1, func(key, val []byte) error {
		var seen *bool
		switch string(name(key)) {
		case "id":
			seen, r.id = &hasID, val
		case "result":
			seen, r.result = &hasResult, val
		case "error":
			seen, errRaw = &hasErr, val
		case "method":
			seen = &hasMeth
		default:
			return nil
		}
		if *seen {
			return fmt.Errorf("duplicate member %s", key)
		}
		*seen = true
		return nil
	})
	if err != nil {
		return reply{}, err
	}
	s.skipSpace()
	if s.i != len(s.b) {
		return reply{}, s.errAt("data after the reply object")
	}
	if hasMeth {
		if hasID {
			return reply{}, errors.New("backend sent a request, not a reply")
		}
		return reply{notification: true}, nil
	}
	if hasErr && string(errRaw) == "null" && hasResult {
		hasErr = false
	}
	switch {
	case hasResult && hasErr:
		return reply{}, errors.New("reply has both result and error")
	case !hasResult && !hasErr:
		return reply{}, errors.New("reply has neither result nor error")
	case hasErr:
		e, err := parseError(errRaw)
		if err != nil {
			return reply{}, err
		}
		r.err = e
	}
	return r, nil
}

// parseError reads a JSON-RPC error object that parseReply already
// validated as JSON. Data aliases raw.
func parseError(raw []byte) (*RPCError, error) {
	if raw[0] != '{' {
		return nil, errors.New("error member is not an object")
	}
	var (
		e       RPCError
		hasCode bool
	)
	s := scanner{b: raw}
	err := s.members(2, func(key, val []byte) error {
		switch string(name(key)) {
		case "code":
			code, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil {
				return fmt.Errorf("error code %.40s is not a 64-bit integer", val)
			}
			e.Code, hasCode = code, true
		case "message":
			if val[0] != '"' {
				return errors.New("error message is not a string")
			}
			e.Message = unquote(val)
		case "data":
			e.Data = val
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasCode {
		return nil, errors.New("error object has no code")
	}
	return &e, nil
}

// name returns a member name from its raw (quoted, validated) form,
// without copying when it holds no escape.
func name(raw []byte) []byte {
	if n := raw[1 : len(raw)-1]; bytes.IndexByte(n, '\\') < 0 {
		return n
	}
	return []byte(unquote(raw))
}

// unquote decodes a validated JSON string literal; like encoding/json, it
// turns invalid UTF-8 into U+FFFD.
func unquote(raw []byte) string {
	if s := raw[1 : len(raw)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // validated by the scanner
	return s
}

// scanner validates JSON text and finds the extent of values in it. Its
// rules are encoding/json's: no UTF-8 check inside strings, lone
// surrogates allowed, nesting at most maxDepth.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) errAt(what string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("%s: unexpected end of line", what)
	}
	return fmt.Errorf("%s: invalid character %q at byte %d", what, s.b[s.i], s.i)
}

// members walks the object at s.i (which is '{', at nesting depth), calling
// f with each raw member name and raw value, and leaves s.i after the
// closing brace.
func (s *scanner) members(depth int, f func(key, val []byte) error) error {
	s.i++
	s.skipSpace()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.errAt("expected member name")
		}
		k := s.i
		if err := s.str(); err != nil {
			return err
		}
		key := s.b[k:s.i]
		s.skipSpace()
		if s.peek() != ':' {
			return s.errAt("expected ':'")
		}
		s.i++
		s.skipSpace()
		v := s.i
		if err := s.value(depth + 1); err != nil {
			return err
		}
		if err := f(key, s.b[v:s.i]); err != nil {
			return err
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.i++
			s.skipSpace()
		case '}':
			s.i++
			return nil
		default:
			return s.errAt("expected ',' or '}'")
		}
	}
}

// value skips one value starting at s.i, validating it.
func (s *scanner) value(depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deeply")
	}
	switch c := s.peek(); {
	case c == '{':
		s.i++
		s.skipSpace()
		if s.peek() == '}' {
			s.i++
			return nil
		}
		for {
			if s.peek() != '"' {
				return s.errAt("expected member name")
			}
			if err := s.str(); err != nil {
				return err
			}
			s.skipSpace()
			if s.peek() != ':' {
				return s.errAt("expected ':'")
			}
			s.i++
			s.skipSpace()
			if err := s.value(depth + 1); err != nil {
				return err
			}
			s.skipSpace()
			switch s.peek() {
			case ',':
				s.i++
				s.skipSpace()
			case '}':
				s.i++
				return nil
			default:
				return s.errAt("expected ',' or '}'")
			}
		}
	case c == '[':
		s.i++
		s.skipSpace()
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.value(depth + 1); err != nil {
				return err
			}
			s.skipSpace()
			switch s.peek() {
			case ',':
				s.i++
				s.skipSpace()
			case ']':
				s.i++
				return nil
			default:
				return s.errAt("expected ',' or ']'")
			}
		}
	case c == '"':
		return s.str()
	case c == '-' || isDigit(c):
		return s.num()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.errAt("expected a value")
	}
}

// plain[c] is true for string bytes that need no attention.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str skips the string at s.i (which is '"').
func (s *scanner) str() error {
	b := s.b
	i := s.i + 1
	for {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			s.i = i
			return s.errAt("unterminated string")
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return nil
		case '\\':
			i++
			if i >= len(b) {
				s.i = i
				return s.errAt("unterminated string")
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for range 4 {
					if i >= len(b) || !isHex(b[i]) {
						s.i = i
						return s.errAt(`invalid \u escape`)
					}
					i++
				}
			default:
				s.i = i
				return s.errAt("invalid escape")
			}
		default: // a control character
			s.i = i
			return s.errAt("control character in string")
		}
	}
}

// num skips the number at s.i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() error {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case isDigit(c):
		s.digits()
	default:
		return s.errAt("invalid number")
	}
	if s.peek() == '.' {
		s.i++
		if !isDigit(s.peek()) {
			return s.errAt("invalid number")
		}
		s.digits()
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !isDigit(s.peek()) {
			return s.errAt("invalid number")
		}
		s.digits()
	}
	return nil
}

func (s *scanner) digits() {
	for s.i < len(s.b) && isDigit(s.b[s.i]) {
		s.i++
	}
}

func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return s.errAt("invalid literal")
	}
	s.i += len(word)
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
