package socketclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
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

// idBefore reports whether a reply's raw id is a positive integer below
// id, written as ids go out (plain decimal, no sign, no leading zero): the
// answer to an earlier request, since ids only increase.
func idBefore(raw []byte, id uint64) bool {
	if len(raw) == 0 || len(raw) > 20 || raw[0] < '1' || raw[0] > '9' {
		return false
	}
	var v uint64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return false // beyond any id
		}
		v = v*10 + d
	}
	return v < id
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

// parseReply parses one reply line (without its newline) in a single pass
// that also validates all of it as JSON: a line encoding/json would reject
// is rejected. On success either notification is set, or exactly one of
// result and err is. Member names match exactly (encoding/json would also
// match "RESULT"). An "error": null beside a result is read as no error, as
// JSON-RPC 1.0 servers send it, and "jsonrpc" is not checked: neither
// makes the answer ambiguous. A repeated id, result, error or method is an
// error rather than a guess at which one counts.
func parseReply(line []byte) (reply, error) {
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) == 0 {
		return reply{}, errors.New("empty line")
	}
	var (
		r                                 reply
		hasID, hasResult, hasErr, hasMeth bool
		errRaw                            []byte
	)
	// One pass validates the whole line and finds the members.
	err := jsonscan.Object(line, func(key, val []byte) error {
		var seen *bool
		switch string(jsonscan.Name(key)) {
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
	if errors.Is(err, jsonscan.ErrNotObject) {
		return reply{}, fmt.Errorf("not a JSON object: starts with %q", trimmed[0])
	}
	if err != nil {
		return reply{}, err
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
	err := jsonscan.Object(raw, func(key, val []byte) error {
		switch string(jsonscan.Name(key)) {
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
			e.Message = jsonscan.Unquote(val)
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
