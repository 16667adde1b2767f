// Package protocol is the MCP side of the bridge: newline-delimited
// JSON-RPC 2.0 framing, the MCP messages of every protocol version from
// 2024-11-05 to 2026-07-28 (legacy initialize sessions and the modern
// stateless era, side by side), and the serve loop: one reader, bounded
// request goroutines, one writer, with cancellation, progress, logging and
// list-changed notifications. It knows nothing of sockets, manifests or
// files: it reads an io.Reader, writes an io.Writer and asks a ToolProvider
// for tools.
package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
	"reflect"
	"strings"
	"unicode/utf8"
)

// JSON-RPC 2.0 and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeResourceNotFound is MCP's code for resources/read of an unknown URI.
	CodeResourceNotFound = -32002
	// CodeUnsupportedProtocolVersion is the 2026-07-28 code for a request
	// whose _meta names a protocol version the server does not speak.
	CodeUnsupportedProtocolVersion = -32022
)

// Error is a JSON-RPC error object. Its Is method compares codes, so
// errors.Is(err, ErrInvalidParams) holds for any error wrapping an *Error
// with code -32602.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error formats the code and message.
func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinel errors for the standard codes. Handlers wrap them with %w to
// choose the code and add a message: fmt.Errorf("%w: unknown tool %q", ErrInvalidParams, name).
var (
	ErrParse          = &Error{Code: CodeParseError, Message: "parse error"}
	ErrInvalidRequest = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams  = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal       = &Error{Code: CodeInternalError, Message: "internal error"}
)

// WireError turns any error into the error object sent to the client: an
// *Error found with errors.As is sent as is; an error wrapping a sentinel
// keeps the sentinel's code and uses the whole error text as the message;
// anything else becomes -32603.
func WireError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e == err {
			return e
		}
		msg := err.Error()
		// A wrapped sentinel reads "jsonrpc error -32602: invalid params:
		// unknown tool"; the code says the rest, so keep the detail.
		if rest, ok := strings.CutPrefix(msg, e.Error()+": "); ok {
			msg = rest
		}
		return &Error{Code: e.Code, Message: msg, Data: e.Data}
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// ID is a request id exactly as the client sent it (a JSON string or
// number). The zero value means "absent"; nullID is a JSON null.
type ID []byte

var nullID = ID("null")

// valid reports whether id is a JSON string or integer, the only kinds
// MCP allows (a fraction or exponent is refused: no client could match it
// reliably against its own id).
func (id ID) valid() bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		// Echoed as sent, so it must be valid on the wire too.
		return utf8.Valid(id)
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// key returns a map key that identifies the id (ids are compared as sent).
func (id ID) key() string { return string(id) }

// request is one decoded client request or notification.
type request struct {
	ID     ID // nil for notifications
	Method string
	Params json.RawMessage
}

func (r *request) isNotification() bool { return r.ID == nil }

// decodeMessage decodes one JSON value (not an array). It returns the
// request, or the error to answer and the id to answer it with (nullID when
// the id could not be read). ignore reports a message that gets no answer
// and has no effect: a response from the client (we never send requests),
// or a notification with params MCP cannot read (a notification is never
// answered, not even with an error).
func decodeMessage(data []byte) (req request, ignore bool, errID ID, err error) {
	// One pass validates the line and splits its top-level members:
	// params (which may be large) are never decoded here.
	var jsonrpc, id, method, params, result, errObj []byte
	e := jsonscan.Object(data, func(rawKey, v []byte) error {
		switch string(jsonscan.Name(rawKey)) {
		case "jsonrpc":
			jsonrpc = v
		case "id":
			id = v
		case "method":
			method = v
		case "params":
			params = v
		case "result":
			result = v
		case "error":
			errObj = v
		}
		return nil
	})
	if errors.Is(e, jsonscan.ErrNotObject) {
		if jsonscan.Valid(data) == nil {
			return req, false, nullID, fmt.Errorf("%w: a message must be a JSON object", ErrInvalidRequest)
		}
		e = jsonscan.Valid(data)
	}
	if e != nil {
		return req, false, nullID, fmt.Errorf("%w: %v", ErrParse, e)
	}
	if id != nil && !ID(id).valid() {
		// An id of null, an object, a bool: there is no id to answer with.
		if id[0] == '"' {
			return req, false, nullID, fmt.Errorf("%w: id is not valid UTF-8", ErrInvalidRequest)
		}
		return req, false, nullID, fmt.Errorf("%w: id must be a string or an integer", ErrInvalidRequest)
	}
	errID = ID(id)
	if errID == nil {
		errID = nullID
	}
	if string(jsonrpc) != `"2.0"` && (jsonrpc == nil || jsonrpc[0] != '"' || jsonscan.Unquote(jsonrpc) != "2.0") {
		return req, false, errID, fmt.Errorf(`%w: "jsonrpc" must be "2.0"`, ErrInvalidRequest)
	}
	if method == nil || string(method) == "null" {
		if id != nil && (result != nil || errObj != nil) {
			return req, true, nil, nil
		}
		return req, false, errID, fmt.Errorf(`%w: "method" is missing`, ErrInvalidRequest)
	}
	if method[0] != '"' {
		return req, false, errID, fmt.Errorf(`%w: "method" must be a string, not %s`, ErrInvalidRequest, kindOf(method))
	}
	name := methodName(method)
	if name == "" {
		return req, false, errID, fmt.Errorf(`%w: "method" is empty`, ErrInvalidRequest)
	}
	if string(params) == "null" {
		params = nil
	}
	if params != nil && params[0] != '{' {
		// MCP params are always objects; JSON-RPC allows arrays, which no MCP method takes.
		if id == nil {
			return req, true, nil, nil
		}
		return req, false, errID, fmt.Errorf(`%w: "params" must be an object`, ErrInvalidRequest)
	}
	return request{ID: ID(id), Method: name, Params: params}, false, nil, nil
}

// errFoundID stops idFromPrefix's scan.
var errFoundID = errors.New("found the id")

// idFromPrefix finds the id of a message from its first bytes only (the
// message being too long to read whole): a top-level "id" member whose
// value is complete within prefix. It returns nullID when there is none
// before prefix ends. A repeated "id" is a client's mistake: the first is
// taken, where decodeMessage takes the last, which a prefix cannot show.
func idFromPrefix(prefix []byte) ID {
	var id ID
	_ = jsonscan.Object(prefix, func(rawKey, v []byte) error {
		if string(jsonscan.Name(rawKey)) != "id" {
			return nil
		}
		// v is a sub-slice of prefix: a number running to prefix's end
		// may go on past it, as 12 does in a cut-off 1234.
		end := cap(prefix) - cap(v) + len(v)
		if ID(v).valid() && (v[0] == '"' || end < len(prefix)) {
			id = ID(v)
		}
		return errFoundID
	})
	if id == nil {
		return nullID
	}
	return id
}

// methodName unquotes a method name. The names of the messages a busy
// client sends again and again are constants, not a string per message.
func methodName(lit []byte) string {
	switch string(lit) {
	case `"tools/call"`:
		return "tools/call"
	case `"tools/list"`:
		return "tools/list"
	case `"ping"`:
		return "ping"
	case `"notifications/cancelled"`:
		return "notifications/cancelled"
	case `"notifications/progress"`:
		return "notifications/progress"
	}
	return jsonscan.Unquote(lit)
}

// kindOf names the kind of a valid JSON value, for messages.
func kindOf(v []byte) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// describeDecodeError says what was wrong with valid JSON of the wrong
// shape in the terms of the message, not of Go types.
func describeDecodeError(err error, whole string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return whole
		}
		want := "of another type"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "a boolean"
		case reflect.Int, reflect.Int64, reflect.Float64:
			want = "a number"
		case reflect.Struct, reflect.Map, reflect.Pointer:
			want = "an object"
		case reflect.Slice:
			want = "an array"
		}
		return fmt.Sprintf("%q must be %s, not %s", te.Field, want, te.Value)
	}
	return err.Error()
}

// appendResponse appends a success response line (without newline).
func appendResponse(buf []byte, id ID, result []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"result":`...)
	buf = append(buf, result...)
	return append(buf, '}')
}

// appendErrorResponse appends an error response line (without newline).
func appendErrorResponse(buf []byte, id ID, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"error":{"code":`...)
	buf = fmt.Appendf(buf, "%d", e.Code)
	buf = append(buf, `,"message":`...)
	buf = appendString(buf, e.Message)
	if len(e.Data) > 0 {
		buf = append(buf, `,"data":`...)
		buf = append(buf, e.Data...)
	}
	return append(buf, "}}"...)
}

// appendNotification appends a notification line (without newline).
func appendNotification(buf []byte, method string, params []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","method":`...)
	buf = appendString(buf, method)
	if len(params) > 0 {
		buf = append(buf, `,"params":`...)
		buf = append(buf, params...)
	}
	return append(buf, '}')
}
