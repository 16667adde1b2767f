package mcphttp

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// maxSafeInteger bounds the integers a header can mirror: those a
// JavaScript client holds exactly, ±(2^53−1).
const maxSafeInteger = 1<<53 - 1

// checkParamHeaders checks the Mcp-Param-{Name} headers of a modern
// tools/call, whose body is body, for the parameters its tool's clients
// mirror (params). A parameter with a value in the body needs one header,
// which decodes to the value's text: a string as it is, an integer in
// decimal (compared as a number, so 42.0 matches 42), a boolean as true
// or false. A parameter without a value, or null, takes no header; one
// sent anyway contradicts the body. Either fault is -32020
// (HeaderMismatch). An integer past ±(2^53−1) cannot be mirrored: -32602.
// Values no header can carry (objects, arrays, fractions) are left to
// the tool's inputSchema, which refuses them: the parameter's type is a
// string, an integer or a boolean. Headers of other names are ignored.
//
// The body is read only when there are params, and then only along
// their paths.
func checkParamHeaders(header http.Header, params []protocol.ParamHeader, body []byte) *protocol.Error {
	if len(params) == 0 {
		return nil
	}
	args, err := member(body, "params", "arguments")
	if err != nil {
		return unreadable(err)
	}
	for _, p := range params {
		if e := checkParamHeader(header, p, args); e != nil {
			return e
		}
	}
	return nil
}

// checkParamHeader checks the header of the parameter p against its value
// in args, a tools/call's arguments (nil when it has none).
func checkParamHeader(header http.Header, p protocol.ParamHeader, args jsontext.Value) *protocol.Error {
	name := "Mcp-Param-" + p.Name
	at := "arguments." + strings.Join(p.Path, ".")
	raw, err := member(args, p.Path...)
	if err != nil {
		return unreadable(err)
	}
	sent := header[textproto.CanonicalMIMEHeaderKey(name)]
	if raw == nil || raw.Kind() == 'n' {
		if len(sent) == 0 {
			return nil
		}
		none := "has no " + at
		if raw != nil {
			none = "has null at " + at
		}
		return headerMismatch("%s header sent, but the body %s: the header is sent only for a value", name, none)
	}
	v := argValue{raw: raw}
	switch raw.Kind() {
	case '"':
		if err := json.Unmarshal(raw, &v.str); err != nil {
			return unreadable(err)
		}
	case 't', 'f':
	case '0':
		n, err := strconv.ParseFloat(string(raw), 64)
		switch {
		case err == nil && n != math.Trunc(n):
			return nil // a fraction
		case err != nil || math.Abs(n) > maxSafeInteger:
			return &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf(
				"tools/call: %s is %s, which cannot be mirrored into the %s header: its integers must be within ±(2^53−1)", at, v, name)}
		}
		v.num = n
	default:
		return nil // an object or an array
	}
	if len(sent) != 1 {
		if len(sent) == 0 {
			return headerMismatch("the %s header is required: the body has %s at %s", name, v, at)
		}
		return headerMismatch("one %s header is allowed, not %d", name, len(sent))
	}
	got, err := decodeHeaderValue(sent[0])
	if err != nil {
		return headerMismatch("%s header value: %v", name, err)
	}
	if !v.matches(got) {
		return headerMismatch("%s header value %q does not match body value %s at %s", name, safetext.Cut(got, maxShown), v, at)
	}
	return nil
}

// argValue is an argument's value that a header can mirror: a string,
// a boolean, or an integer.
type argValue struct {
	raw jsontext.Value
	str string  // a string's text
	num float64 // an integer's value
}

// matches reports whether a header's decoded value is v's text: a
// string as it is, a boolean as true or false, an integer as a JSON
// number of the same value ("42", "42.0" and "4.2e1" are 42), compared
// as JavaScript clients compare numbers, as doubles.
func (v argValue) matches(got string) bool {
	switch v.raw.Kind() {
	case '"':
		return got == v.str
	case '0':
		g := jsontext.Value(got)
		if g.Kind() != '0' || !g.IsValid() {
			return false
		}
		n, err := strconv.ParseFloat(got, 64)
		return err == nil && n == v.num
	}
	return got == string(v.raw)
}

// String returns v as a message shows it: a string quoted, cut if long.
func (v argValue) String() string {
	if v.raw.Kind() == '"' {
		return strconv.Quote(safetext.Cut(v.str, maxShown))
	}
	return safetext.Cut(string(v.raw), maxShown)
}

// member returns the value at path in v, as a part of v: the member
// path[0] of the object v, then the member path[1] of that, and so on.
// It is nil when some step finds no such member, or a value that is not
// an object. Only the way to it is read.
func member(v jsontext.Value, path ...string) (jsontext.Value, error) {
	if len(path) == 0 {
		return v, nil
	}
	// Strings may hold invalid UTF-8, as in a message the session reads
	// leniently (it refuses arguments that do). A name twice in an object
	// is not looked for: the session refused the message already.
	dec := jsontext.NewDecoder(bytes.NewBuffer(v), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	for _, name := range path {
		switch dec.PeekKind() {
		case '{':
		case 0:
			_, err := dec.ReadToken() // the error PeekKind met
			return nil, err
		default:
			return nil, nil
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		for {
			if dec.PeekKind() == '}' {
				return nil, nil
			}
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if tok.String() == name {
				break
			}
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
		}
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	end := dec.InputOffset()
	return v[end-int64(len(raw)) : end], nil
}

// unreadable is the error of a tools/call whose arguments cannot be read
// where a header mirrors them: a string there holds invalid UTF-8, which
// the session would refuse too. The call does not go on unchecked.
func unreadable(err error) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("tools/call: the arguments cannot be read: %v", err)}
}
