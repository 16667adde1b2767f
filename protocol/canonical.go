package protocol

import (
	"bytes"
	"cmp"
	"errors"
	"math/big"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// canonical returns the canonical form of a JSON value, which two values
// share exactly when they are the same JSON: members in the order of their
// names, no insignificant white space, strings in the library's canonical
// form, and numbers as their exact decimal value, so that 1, 1.0 and 1e0
// are one number while 9007199254740992 and 9007199254740993 are two. (RFC
// 8785 would make both doubles, and so the same.) Its cost is linear in the
// value's size: an exponent, however long, is not expanded.
func canonical(v jsontext.Value) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	var out []byte
	out, err := appendCanonical(out, dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err == nil {
		return nil, errors.New("more than one JSON value")
	}
	return out, nil
}

// appendCanonical appends the canonical form of the next value of dec.
func appendCanonical(out []byte, dec *jsontext.Decoder) ([]byte, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		type member struct {
			name  string
			value []byte
		}
		var members []member
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			m := member{name: name.String()}
			if m.value, err = appendCanonical(nil, dec); err != nil {
				return nil, err
			}
			members = append(members, m)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		// Repeated names keep every value, in an order of their own.
		slices.SortFunc(members, func(a, b member) int {
			return cmp.Or(strings.Compare(a.name, b.name), bytes.Compare(a.value, b.value))
		})
		out = append(out, '{')
		for i, m := range members {
			if i > 0 {
				out = append(out, ',')
			}
			if out, err = jsontext.AppendQuote(out, m.name); err != nil {
				return nil, err
			}
			out = append(append(out, ':'), m.value...)
		}
		return append(out, '}'), nil
	case '[':
		out = append(out, '[')
		for first := true; dec.PeekKind() != ']'; first = false {
			if !first {
				out = append(out, ',')
			}
			if out, err = appendCanonical(out, dec); err != nil {
				return nil, err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return append(out, ']'), nil
	case '"':
		return jsontext.AppendQuote(out, tok.String())
	case '0':
		return appendExactNumber(out, tok.String()), nil
	}
	return append(out, tok.String()...), nil // true, false, null
}

// appendExactNumber appends a JSON number (valid: the decoder read it) as
// its exact decimal value: the sign, the significant digits without
// leading or trailing zeros, and the power of ten they are multiplied by,
// as "-123e-2" for -1.230. Zero, of any sign or spelling, is "0".
func appendExactNumber(out []byte, n string) []byte {
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	mantissa, exp, _ := strings.Cut(strings.ToLower(n), "e")
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	// The value is digits × 10^(exp − len(frac)), less the trailing zeros.
	trimmed := strings.TrimRight(digits, "0")
	if trimmed == "" {
		return append(out, '0')
	}
	power := new(big.Int)
	if exp != "" {
		power.SetString(strings.TrimPrefix(exp, "+"), 10) // digits, so it cannot fail
	}
	power.Add(power, big.NewInt(int64(len(digits)-len(trimmed)-len(frac))))
	if neg {
		out = append(out, '-')
	}
	out = append(out, trimmed...)
	if power.Sign() != 0 {
		out = power.Append(append(out, 'e'), 10)
	}
	return out
}
