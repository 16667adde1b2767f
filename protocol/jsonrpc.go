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
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

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
// keeps the sentinel's code and uses the whole error text as the message,
// less the sentinel's own words at its start; anything else becomes -32603.
func WireError(err error) *Error {
	var e *Error
	if !errors.As(err, &e) {
		return &Error{Code: CodeInternalError, Message: err.Error()}
	}
	if e == err {
		return e
	}
	// "invalid params: unknown tool": the code says the first part.
	msg := strings.TrimPrefix(err.Error(), e.Message+": ")
	return &Error{Code: e.Code, Message: msg, Data: e.Data}
}

// Options of a lenient decoding. Decoding is strict (the library's
// defaults: names matched exactly, duplicate names and invalid UTF-8
// rejected), but a message with invalid UTF-8 in it is decoded again with
// these, so that a stray byte in a member the server ignores does not
// make the whole message unreadable. The values the server reads from
// such a message are checked where they are read: strings it compares (a
// name, a level) cannot match with the replacement character in them,
// and raw values it echoes or passes on (ids, tokens, arguments) are
// validated on their own.
var lenient = jsontext.AllowInvalidUTF8(true)

// Options of every encoding. Raw values (schemas, backend results) pass
// through as they are: their strings keep their escapes, and invalid
// UTF-8 or a repeated name, which the server did not write, does not fail
// a response. U+2028 and U+2029 are escaped for JavaScript clients, and
// maps (in log data) are sorted, so the same value encodes the same way.
var encodeOpts = json.JoinOptions(
	json.Deterministic(true),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.PreserveRawStrings(true),
	jsontext.EscapeForJS(true),
)

// nullID answers a message whose id could not be read.
var nullID = jsontext.Value("null")

// validID reports whether id is a JSON string or integer, the only kinds
// MCP allows (a fraction or exponent is refused: no client could match it
// reliably against its own id). Ids are echoed as sent, so a string must
// be valid UTF-8 too.
func validID(id jsontext.Value) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		return jsontext.Value(id).IsValid()
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
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

// request is one request or notification from the client, and the
// protocol version in force for it once dispatch has chosen it.
type request struct {
	id      jsontext.Value // nil for a notification
	method  string
	params  jsontext.Value // a JSON object, or nil
	lenient bool           // the message holds invalid UTF-8: decode params with lenient
	pos     int            // its position in its batch
	era
}

// message is the envelope of any message from the client: the id and the
// params kept as sent, the other members only looked at.
type message struct {
	JSONRPC token          `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  token          `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  token          `json:"result"`
	Error   token          `json:"error"`
}

// token is a member looked at, not kept: its kind (0 when absent) and,
// for a string, its text.
type token struct {
	kind jsontext.Kind
	str  string
}

func (t *token) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if t.kind = dec.PeekKind(); t.kind != '"' {
		return dec.SkipValue()
	}
	tok, err := dec.ReadToken()
	t.str = tok.String()
	return err
}

// decodeMessage decodes one message (not a batch). It returns the
// request, or the error to answer and the id to answer it with (nullID
// when the id could not be read). ignore reports a message that gets no
// answer and has no effect: a response from the client (the server sends
// no requests), or a notification MCP cannot read (a notification is
// never answered, not even with an error).
func decodeMessage(data []byte) (rq request, ignore bool, errID jsontext.Value, err error) {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		m = message{}
		if json.Unmarshal(data, &m, lenient) != nil {
			return decodeFailure(data, err)
		}
		rq.lenient = true
	}
	if m.Result.kind != 0 || m.Error.kind != 0 {
		return rq, true, nil, nil
	}
	if m.ID != nil && !validID(m.ID) {
		// An id of null, an object, a bool: there is no id to answer with.
		if m.ID[0] == '"' {
			return rq, false, nullID, fmt.Errorf("%w: id is not valid UTF-8", ErrInvalidRequest)
		}
		return rq, false, nullID, fmt.Errorf("%w: id must be a string or an integer", ErrInvalidRequest)
	}
	errID = m.ID
	if errID == nil {
		errID = nullID
	}
	switch {
	case m.JSONRPC.str != "2.0":
		return rq, false, errID, fmt.Errorf(`%w: "jsonrpc" must be "2.0"`, ErrInvalidRequest)
	case m.Method.kind == 0 || m.Method.kind == 'n':
		return rq, false, errID, fmt.Errorf(`%w: "method" is missing`, ErrInvalidRequest)
	case m.Method.kind != '"':
		return rq, false, errID, fmt.Errorf(`%w: "method" must be a string, not %s`, ErrInvalidRequest, kindName(m.Method.kind))
	case m.Method.str == "":
		return rq, false, errID, fmt.Errorf(`%w: "method" is empty`, ErrInvalidRequest)
	}
	if m.Params.Kind() == 'n' {
		m.Params = nil
	}
	if m.Params != nil && m.Params.Kind() != '{' {
		// MCP params are always objects; JSON-RPC allows arrays, which no MCP method takes.
		if m.ID == nil {
			return rq, true, nil, nil
		}
		return rq, false, errID, fmt.Errorf(`%w: "params" must be an object`, ErrInvalidRequest)
	}
	rq.id, rq.method, rq.params = m.ID, m.Method.str, m.Params
	return rq, false, nil, nil
}

// decodeFailure explains why data is not a message. A repeated member
// name leaves the message readable enough to tell a notification or a
// response (not answered) from a request and its id.
func decodeFailure(data []byte, err error) (rq request, ignore bool, errID jsontext.Value, _ error) {
	var serr *jsontext.SyntacticError
	if !errors.As(err, &serr) {
		// The message is not an object: is it JSON at all?
		if err = json.Unmarshal(data, new(jsontext.Value), lenient); err == nil {
			return rq, false, nullID, fmt.Errorf("%w: a message must be a JSON object", ErrInvalidRequest)
		}
		if !errors.As(err, &serr) {
			return rq, false, nullID, fmt.Errorf("%w: %s", ErrParse, describe(err))
		}
	}
	if !errors.Is(serr, jsontext.ErrDuplicateName) {
		return rq, false, nullID, fmt.Errorf("%w: %s", ErrParse, describe(err))
	}
	var m message
	if json.Unmarshal(data, &m, lenient, jsontext.AllowDuplicateNames(true)) != nil ||
		m.Result.kind != 0 || m.Error.kind != 0 || m.ID == nil {
		return rq, true, nil, nil
	}
	errID = nullID
	if validID(m.ID) && serr.JSONPointer != "/id" {
		errID = m.ID
	}
	return rq, false, errID, fmt.Errorf("%w: %s", ErrInvalidRequest, describe(err))
}

// idFromPrefix finds what a message too long to read whole shows in its
// first bytes: its top-level id, when complete within prefix, and
// whether it is a response (it has a result or an error member).
func idFromPrefix(prefix []byte) (id jsontext.Value, response bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(prefix), lenient, jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	for {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return id, response
		}
		switch name.String() {
		case "result", "error":
			response = true
		case "id":
			v, err := dec.ReadValue()
			if err != nil {
				return id, response
			}
			// A number running to the end of prefix may go on past it, as
			// 12 does in a cut-off 1234.
			if id == nil && validID(v) && (v[0] == '"' || dec.InputOffset() < int64(len(prefix))) {
				id = v.Clone()
			}
			continue
		}
		if dec.SkipValue() != nil {
			return id, response
		}
	}
}

// describe says what is wrong with a message or its params in the terms
// of the message, not of Go types.
func describe(err error) string {
	var serr *json.SemanticError
	if errors.As(err, &serr) && serr.GoType != nil && serr.JSONKind != 0 {
		what := "the params"
		if serr.JSONPointer != "" {
			what = fmt.Sprintf("%q", serr.JSONPointer.LastToken())
		}
		return fmt.Sprintf("%s must be %s, not %s", what, goKindName(serr.GoType), kindName(serr.JSONKind))
	}
	msg := err.Error()
	for _, p := range []string{"jsontext: ", "json: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// kindName names a JSON kind for messages.
func kindName(k jsontext.Kind) string {
	switch k {
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

// goKindName names what a Go type decodes from.
func goKindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t == reflect.TypeFor[jsontext.Value]() {
			return "a JSON value"
		}
		return "an array"
	}
	return "an object"
}

// response is a JSON-RPC response: Result or Error is set.
type response struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Result  any            `json:"result,omitzero"`
	Error   *Error         `json:"error,omitzero"`
}

// wireNotification is a JSON-RPC notification from the server.
type wireNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitzero"`
}

// encodeResult encodes the response carrying result.
func encodeResult(id jsontext.Value, result any) ([]byte, error) {
	return json.Marshal(&response{JSONRPC: "2.0", ID: id, Result: result}, encodeOpts)
}

// encodeError encodes the error response to id (nullID when nil).
func encodeError(id jsontext.Value, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	b, err := json.Marshal(&response{JSONRPC: "2.0", ID: id, Error: e}, encodeOpts)
	if err != nil {
		// Only Data, from a handler, can be invalid.
		b, _ = json.Marshal(&response{JSONRPC: "2.0", ID: id, Error: &Error{Code: e.Code, Message: e.Message}}, encodeOpts)
	}
	return b
}

// encodeNotification encodes a notification. Its params are the server's
// own values, which always encode.
func encodeNotification(method string, params any) []byte {
	b, _ := json.Marshal(&wireNotification{JSONRPC: "2.0", Method: method, Params: params}, encodeOpts)
	return b
}
