package jsonscan

import "encoding/json"

// Decode decodes one JSON value into the generic form JSON Schema
// validators take: map[string]any, []any, string, json.Number, bool or
// nil. It validates as it goes, in a single pass.
func Decode(data []byte) (any, error) {
	s := scanner{data: data}
	s.skipSpace()
	v, err := s.decode(0)
	if err != nil {
		return nil, err
	}
	s.skipSpace()
	if s.pos != len(data) {
		return nil, s.fail("unexpected data after the top-level value")
	}
	return v, nil
}

func (s *scanner) decode(depth int) (any, error) {
	if s.pos >= len(s.data) {
		return nil, s.fail("unexpected end of JSON input")
	}
	start := s.pos
	switch c := s.data[s.pos]; {
	case c == '"':
		if err := s.str(); err != nil {
			return nil, err
		}
		return Unquote(s.data[start:s.pos]), nil
	case c == '{':
		if depth+1 > MaxDepth {
			return nil, s.fail("nesting too deep")
		}
		m := map[string]any{}
		s.pos++
		s.skipSpace()
		if s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.pos++
			return m, nil
		}
		for {
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return nil, s.fail("expected a string key")
			}
			ks := s.pos
			if err := s.str(); err != nil {
				return nil, err
			}
			key := Unquote(s.data[ks:s.pos])
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return nil, s.fail("expected ':' after an object key")
			}
			s.pos++
			s.skipSpace()
			v, err := s.decode(depth + 1)
			if err != nil {
				return nil, err
			}
			m[key] = v
			s.skipSpace()
			if s.pos >= len(s.data) {
				return nil, s.fail("unexpected end of JSON input")
			}
			switch s.data[s.pos] {
			case ',':
				s.pos++
				s.skipSpace()
			case '}':
				s.pos++
				return m, nil
			default:
				return nil, s.fail("expected ',' or '}' in an object")
			}
		}
	case c == '[':
		if depth+1 > MaxDepth {
			return nil, s.fail("nesting too deep")
		}
		a := []any{}
		s.pos++
		s.skipSpace()
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			return a, nil
		}
		for {
			v, err := s.decode(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			s.skipSpace()
			if s.pos >= len(s.data) {
				return nil, s.fail("unexpected end of JSON input")
			}
			switch s.data[s.pos] {
			case ',':
				s.pos++
				s.skipSpace()
			case ']':
				s.pos++
				return a, nil
			default:
				return nil, s.fail("expected ',' or ']' in an array")
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		if err := s.number(); err != nil {
			return nil, err
		}
		return json.Number(s.data[start:s.pos]), nil
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	}
	return nil, s.fail("invalid character looking for the beginning of a value")
}
