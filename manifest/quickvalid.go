package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
)

// Validating arguments with the schema library means decoding them into
// maps and walking the compiled schema, about forty allocations and a
// tenth of a pipelined call's CPU. Most input schemas are an object of
// typed properties, so an argCheck checks arguments against such a
// schema on the raw bytes, allocating nothing. Like surelyCompiles it
// only ever says "surely valid": anything else, including every invalid
// value, goes to the library, which decides and words the problems.
// FuzzQuickValid checks the library agrees whenever it is sure.

// argCheck is the part of a schema the fast path understands. A nil
// *argCheck accepts nothing for sure.
type argCheck struct {
	types      jsonTypes            // allowed types; 0 means any
	props      map[string]*argCheck // properties, each a argCheck
	required   []string
	closed     bool     // additionalProperties: false
	enum       []string // allowed strings, when every enum value is a string
	hasEnum    bool
	minLen     int // -1 when absent
	maxLen     int
	lower      *float64 // minimum or exclusiveMinimum
	lowerExcl  bool
	upper      *float64
	upperExcl  bool
	numberKeys bool // has a numeric bound
}

type jsonTypes uint8

const (
	tObject jsonTypes = 1 << iota
	tArray
	tString
	tNumber
	tInteger
	tBoolean
	tNull
)

// typeBits maps JSON Schema's simple type names to the types they allow.
var typeBits = map[string]jsonTypes{"object": tObject, "array": tArray, "string": tString, "number": tNumber | tInteger, "integer": tInteger, "boolean": tBoolean, "null": tNull}

// newArgCheck builds the fast path for a decoded schema (from
// decodeValue), or returns nil when the schema uses anything it does not
// understand.
func newArgCheck(v any) *argCheck {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if s, ok := m["$schema"]; ok && s != draft2020 {
		return nil
	}
	return buildArgCheck(m, 0)
}

func buildArgCheck(m map[string]any, depth int) *argCheck {
	if depth > maxQuickDepth {
		return nil
	}
	q := &argCheck{minLen: -1, maxLen: -1}
	for k, v := range m {
		switch k {
		case "$schema":
			if depth > 0 {
				return nil
			}
		case "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly":
			// Annotations: no effect on validity. (format is not one here:
			// the library asserts the formats it knows.)
		case "type":
			switch t := v.(type) {
			case string:
				if typeBits[t] == 0 {
					return nil
				}
				q.types |= typeBits[t]
			case []any:
				for _, e := range t {
					s, _ := e.(string)
					if typeBits[s] == 0 {
						return nil
					}
					q.types |= typeBits[s]
				}
			default:
				return nil
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			q.props = make(map[string]*argCheck, len(props))
			for name, ps := range props {
				switch ps := ps.(type) {
				case map[string]any:
					if q.props[name] = buildArgCheck(ps, depth+1); q.props[name] == nil {
						return nil
					}
				case bool:
					if !ps {
						return nil
					}
					q.props[name] = &argCheck{minLen: -1, maxLen: -1}
				default:
					return nil
				}
			}
		case "required":
			req, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range req {
				s, ok := r.(string)
				if !ok {
					return nil
				}
				q.required = append(q.required, s)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			q.closed = !b
		case "enum":
			vals, ok := v.([]any)
			if !ok {
				return nil
			}
			q.hasEnum = true
			for _, e := range vals {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				q.enum = append(q.enum, s)
			}
		case "minLength", "maxLength":
			n, ok := v.(json.Number)
			if !ok {
				return nil
			}
			i, err := strconv.Atoi(string(n))
			if err != nil || i < 0 || i > maxExactInt {
				return nil // the library reads these through a float64
			}
			if k == "minLength" {
				q.minLen = i
			} else {
				q.maxLen = i
			}
		case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
			n, ok := v.(json.Number)
			if !ok || !plainNumber([]byte(n)) {
				return nil
			}
			f, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return nil
			}
			q.numberKeys = true
			switch k {
			case "minimum", "exclusiveMinimum":
				if q.lower != nil {
					return nil // both: leave it to the library
				}
				q.lower, q.lowerExcl = &f, k == "exclusiveMinimum"
			default:
				if q.upper != nil {
					return nil
				}
				q.upper, q.upperExcl = &f, k == "exclusiveMaximum"
			}
		default:
			return nil
		}
	}
	return q
}

var errNotSure = errors.New("not sure")

// maxExactInt is the largest integer a float64 holds exactly (2^53).
const maxExactInt = 1 << 53

// plainNumber reports whether a number literal is short and its exponent
// small. The library compares numbers as big.Rat, whose parser refuses
// exponents past a million (and the library then fails), so only
// literals far from that take the fast path.
func plainNumber(lit []byte) bool {
	if len(lit) > 40 {
		return false
	}
	if i := bytes.IndexAny(lit, "eE"); i >= 0 {
		exp := bytes.TrimLeft(lit[i+1:], "+-")
		return len(exp) <= 3
	}
	return true
}

// valid reports whether the raw JSON value surely satisfies the schema.
// raw must be valid JSON when it is nested; at the top it is checked.
func (q *argCheck) valid(raw []byte) bool {
	if q == nil || len(raw) == 0 {
		return false
	}
	var t jsonTypes
	switch c := raw[0]; {
	case c == '{':
		t = tObject
	case c == '[':
		t = tArray
	case c == '"':
		t = tString
	case c == 't' || c == 'f':
		t = tBoolean
	case c == 'n':
		t = tNull
	default:
		t = tNumber
		if bytes.IndexAny(raw, ".eE") < 0 {
			t |= tInteger
		}
	}
	if q.types != 0 && q.types&t == 0 {
		return false
	}
	if q.hasEnum && (t != tString || !q.enumHas(raw)) {
		return false
	}
	switch {
	case t == tObject:
		return q.validObject(raw)
	case t == tString:
		return q.validString(raw)
	case t&tNumber != 0 && q.numberKeys:
		return q.validNumber(raw)
	}
	return true
}

// validObject scans the whole object, so it also checks that raw is
// JSON (the arguments at the top are not checked before).
func (q *argCheck) validObject(raw []byte) bool {
	var found uint64 // which required properties were seen, by index
	if len(q.required) > 64 {
		return false
	}
	err := jsonscan.Object(raw, func(rawKey, value []byte) error {
		name := rawKey[1 : len(rawKey)-1]
		if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
			return errNotSure // decoding would change the name
		}
		for i, r := range q.required {
			if r == string(name) {
				found |= 1 << i
			}
		}
		p, ok := q.props[string(name)]
		if !ok {
			if q.closed {
				return errNotSure
			}
			return nil
		}
		if !p.valid(value) {
			return errNotSure
		}
		return nil
	})
	return err == nil && found == 1<<len(q.required)-1
}

func (q *argCheck) validString(raw []byte) bool {
	if q.minLen < 0 && q.maxLen < 0 {
		return true
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return false
	}
	n := utf8.RuneCount(inner)
	return (q.minLen < 0 || n >= q.minLen) && (q.maxLen < 0 || n <= q.maxLen)
}

func (q *argCheck) enumHas(raw []byte) bool {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		return false
	}
	for _, e := range q.enum {
		if e == string(inner) {
			return true
		}
	}
	return false
}

// validNumber compares as float64. Rounding is monotonic, so a strict
// inequality between the rounded values holds for the exact ones; a tie
// is left to the library.
func (q *argCheck) validNumber(raw []byte) bool {
	if !plainNumber(raw) {
		return false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return false
	}
	if q.lower != nil && !(f > *q.lower) {
		return false
	}
	if q.upper != nil && !(f < *q.upper) {
		return false
	}
	return true
}
