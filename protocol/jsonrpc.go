// Package protocol is the MCP side of the bridge: newline-delimited
// JSON-RPC 2.0 framing, the MCP messages of every protocol version from
// 2024-11-05 to 2026-07-28 (legacy initialize sessions and the modern
// stateless era, side by side), and the serve loop: one reader, bounded
// request goroutines, one writer, with cancellation, progress, logging and
// list-changed notifications. It knows nothing of sockets, manifests or
// files: it reads an io.Reader, writes an io.Writer and asks a ToolProvider
// for tools (and, when it has them, a ResourceProvider, a PromptProvider
// and a CompletionProvider for the rest).
package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
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
	// CodeHeaderMismatch is the 2026-07-28 code for an HTTP request whose
	// headers do not match its body.
	CodeHeaderMismatch = -32020
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
// *Error is sent as is; an error wrapping one keeps its code and data, and
// its text is the message, less the wrapped error's words at its start;
// anything else becomes -32603.
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

// Decoding is strict (the library's defaults: exact names, no repeated
// names, no invalid UTF-8), but a message with invalid UTF-8 is decoded
// again, leniently, so that a stray byte in a member the server ignores
// does not make it unreadable. What the server reads from it is checked
// where it is read: strings it compares cannot match with U+FFFD in them,
// and raw values it echoes or passes on are validated on their own.
var lenient = jsontext.AllowInvalidUTF8(true)

// Options of every encoding. Raw values (schemas, backend results) pass
// through as they are, escapes kept; their faults, which the server did
// not write, do not fail a response. U+2028 and U+2029 are escaped for
// JavaScript clients; maps (in log data) are sorted.
var encodeOpts = json.JoinOptions(
	json.Deterministic(true),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.PreserveRawStrings(true),
	jsontext.EscapeForJS(true),
)

// nullID answers a message whose id could not be read.
var nullID = jsontext.Value("null")

// validID reports whether id is a JSON string (valid UTF-8: it is echoed
// as sent) or integer, the only kinds MCP allows: no client could match a
// fraction or an exponent reliably against its own id.
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
// version in force for it once dispatch has chosen it.
type request struct {
	id      jsontext.Value // nil for a notification
	method  string
	params  jsontext.Value // a JSON object, or nil
	lenient bool           // the message holds invalid UTF-8: decode params with lenient
	pos     int            // its position in its batch
	out     Sink           // where its response and the notifications about it go
	hold    *hold          // its bytes, counted until its response is written
	reply   *clientReply   // for a response from the client, to the request id
	flight  *flight        // for a request on a goroutine of its own, once started
	task    *task          // for a tools/call that may run as a task, the task reserved
	era
}

// message is the envelope of any message from the client: the id and the
// params kept as sent, the other members only looked at.
type message struct {
	JSONRPC token          `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  token          `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  jsontext.Value `json:"result"`
	Error   jsontext.Value `json:"error"`
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

// decodeMessage decodes one message (not a batch): the request, or the
// error to answer and the id to answer it with (nullID if unreadable).
// ignore reports a message that gets no answer: a response from the
// client (the server sends no requests), or a notification MCP cannot
// read (a notification is never answered, not even with an error).
func decodeMessage(data []byte) (rq request, ignore bool, errID jsontext.Value, err error) {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		m = message{}
		if json.Unmarshal(data, &m, lenient) != nil {
			return decodeFailure(data, err)
		}
		rq.lenient = true
	}
	if m.Result != nil || m.Error != nil {
		// A response to a request of the server's: routed by its id, when
		// it is one the server could have sent.
		if len(m.ID) > 0 && m.ID[0] == '"' && validID(m.ID) && (m.Result == nil) != (m.Error == nil) {
			reply, err := replyOf(m.Result, m.Error)
			if err == nil {
				rq.id, rq.reply = m.ID, &reply
				return rq, false, nil, nil
			}
		}
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
		m.Result != nil || m.Error != nil || m.ID == nil {
		return rq, true, nil, nil
	}
	errID = nullID
	if validID(m.ID) && serr.JSONPointer != "/id" {
		errID = m.ID
	}
	return rq, false, errID, fmt.Errorf("%w: %s", ErrInvalidRequest, describe(err))
}

// lastID matches an id that is the last member of an object at the end
// of a line: the object's closing brace ends the line, so the member is
// the top-level object's own.
var lastID = regexp.MustCompile(`[{,]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)\s*}\s*$`)

// idAtEnd finds the id of a message from its last bytes only, when it is
// the message's last member (where the TypeScript SDK writes it).
func idAtEnd(tail []byte) jsontext.Value {
	m := lastID.FindSubmatch(tail)
	if m == nil || !validID(m[1]) {
		return nil
	}
	return bytes.Clone(m[1])
}

// idFromPrefix finds what a message too long to read whole shows in its
// first bytes: its top-level id, when complete within prefix, and
// whether it is a response (it has a result or an error member).
func idFromPrefix(prefix []byte) (id jsontext.Value, response bool) {
	// A bytes.Buffer, which the decoder reads in place: from a Reader it
	// would copy the prefix, up to MaxMessageSize, into buffers it grows.
	dec := jsontext.NewDecoder(bytes.NewBuffer(prefix), lenient, jsontext.AllowDuplicateNames(true))
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
		want, ok := goKindNames[serr.GoType.Kind()]
		if !ok {
			want = "an object"
		}
		return fmt.Sprintf("%s must be %s, not %s", what, want, kindName(serr.JSONKind))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return strings.TrimPrefix(msg, "jsontext: ")
}

// goKindNames say what the params' Go types decode from.
var goKindNames = map[reflect.Kind]string{
	reflect.String: "a string", reflect.Bool: "a boolean", reflect.Int: "a number", reflect.Slice: "an array",
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

// outMessage is a message to the client: a response, with Result or
// Error, or a notification, with Method and no ID.
type outMessage struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id,omitzero"`
	Method  string         `json:"method,omitzero"`
	Params  any            `json:"params,omitzero"`
	Result  any            `json:"result,omitzero"`
	Error   *Error         `json:"error,omitzero"`
}

// encodeResult encodes the response carrying result.
func encodeResult(id jsontext.Value, result any) ([]byte, error) {
	return json.Marshal(&outMessage{JSONRPC: "2.0", ID: id, Result: result}, encodeOpts)
}

// ErrorResponse returns the error response to id (null when nil), for a
// transport that refuses a message before a session sees it.
func ErrorResponse(id jsontext.Value, e *Error) []byte { return encodeError(id, e) }

// encodeError encodes the error response to id (nullID when nil).
func encodeError(id jsontext.Value, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	b, err := json.Marshal(&outMessage{JSONRPC: "2.0", ID: id, Error: e}, encodeOpts)
	if err != nil { // only Data, from a handler, can fail
		b, _ = json.Marshal(&outMessage{JSONRPC: "2.0", ID: id, Error: &Error{Code: e.Code, Message: e.Message}}, encodeOpts)
	}
	return b
}

// encodeNotification encodes a notification. Its params are the server's
// own values, which always encode.
func encodeNotification(method string, params any) []byte {
	b, _ := json.Marshal(&outMessage{JSONRPC: "2.0", Method: method, Params: params}, encodeOpts)
	return b
}
