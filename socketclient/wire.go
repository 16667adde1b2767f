package socketclient

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// requestLine returns the request line, newline included, in parts
// written one after the other: params go out as they are, without a copy,
// unless they hold a line break, which would split the line, and are then
// compacted. Strings and numbers are sent as written. Empty params are left
// out, since a method without parameters may reject "params": {}. The
// envelope around them has a fixed shape: its members are written in turn,
// the method quoted by the JSON library.
func requestLine(id uint64, method string, params jsontext.Value) (net.Buffers, error) {
	if len(bytes.Trim(params, " \t\r\n")) == 0 {
		params = nil
	}
	head := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":,"params":`)+20+len(method)+2)
	head = strconv.AppendUint(append(head, `{"jsonrpc":"2.0","id":`...), id, 10)
	head, err := jsontext.AppendQuote(append(head, `,"method":`...), method)
	if err != nil {
		return nil, fmt.Errorf("encode backend request: method %q: %w", method, err)
	}
	if params == nil {
		return net.Buffers{append(head, "}\n"...)}, nil
	}
	if !params.IsValid() {
		// Decoding says why, in the words the library uses for values.
		err := json.Unmarshal(params, new(jsontext.Value))
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, fmt.Errorf("encode backend request: params: %w", err)
	}
	if bytes.ContainsAny(params, "\r\n") {
		params = bytes.Clone(params)
		if err := params.Compact(); err != nil {
			return nil, fmt.Errorf("encode backend request: params: %w", err)
		}
	}
	return net.Buffers{append(head, `,"params":`...), params, []byte("}\n")}, nil
}

// reply is one message from the backend. A member that is absent stays
// nil; a null one is the literal null (for error, a nil pointer: an
// "error": null beside a result, as JSON-RPC 1.0 servers send it, is no
// error). Result is the bytes of the line it was decoded from: a large
// result is not copied.
type reply struct {
	ID     jsontext.Value `json:"id"`
	Method jsontext.Value `json:"method"`
	Params jsontext.Value `json:"params"` // of a notification or a request
	Result span           `json:"result"`
	Error  *struct {
		Code    *int64         `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

// span records where a member's value lies in the decoded input, so that
// it can be taken from the input instead of copied out.
type span struct {
	start, end int64
	set        bool
}

func (s *span) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue() // checked, not copied: the input is the line
	s.end = dec.InputOffset()
	s.start, s.set = s.end-int64(len(v)), true
	return err
}

// notification reports a message from the backend that asks for no
// answer: progress or a log message about the call (see Call.Notify).
func (r *reply) notification() bool { return r.Method != nil && r.ID == nil }

// request reports a request of the backend's own during a call, which the
// client answers on the same connection (see Call.Request).
func (r *reply) request() bool { return r.Method != nil && r.ID != nil }

// method returns the method of a notification or a request, or "" when
// it is not a string.
func (r *reply) method() string {
	var m string
	if r.Method.Kind() != '"' || json.Unmarshal(r.Method, &m) != nil {
		return ""
	}
	return m
}

// decodeReply decodes one line from the backend and returns the reply and
// its result (nil when it has none), which is part of line. Member names
// match exactly, and a repeated one is an error rather than a guess at
// which one counts. Unless it is a notification, a reply has exactly one
// of a result and an error, which has a code.
//
// Invalid UTF-8 in strings, escaped lone surrogates included, is accepted
// and replaced with U+FFFD, so the bridge passes on valid JSON text: such
// a result, or error data, is reformatted (and so compacted and copied). A
// valid line, the usual case, is decoded once.
func decodeReply(line []byte) (*reply, jsontext.Value, error) {
	var r reply
	err := json.Unmarshal(line, &r)
	invalidUTF8 := false
	if err != nil {
		r = reply{}
		if err = json.Unmarshal(line, &r, jsontext.AllowInvalidUTF8(true)); err != nil {
			return nil, nil, err
		}
		invalidUTF8 = true
	}
	switch {
	case r.Method != nil && r.method() == "":
		return nil, nil, errors.New("method is not a string")
	case r.request() && !validID(r.ID):
		return nil, nil, errors.New("request id is not a string or an integer")
	case r.notification(), r.request():
		if invalidUTF8 {
			validUTF8(&r.Params)
		}
		return &r, nil, nil
	case r.Result.set && r.Error != nil:
		return nil, nil, errors.New("reply has both result and error")
	case !r.Result.set && r.Error == nil:
		return nil, nil, errors.New("reply has neither result nor error")
	case r.Error != nil && r.Error.Code == nil:
		return nil, nil, errors.New("error object has no code")
	}
	var result jsontext.Value
	if r.Result.set {
		result = line[r.Result.start:r.Result.end:r.Result.end]
	}
	if invalidUTF8 {
		validUTF8(&result)
		if r.Error != nil {
			validUTF8(&r.Error.Data)
		}
	}
	return &r, result, nil
}

// validUTF8 replaces any invalid UTF-8 in *v with U+FFFD, reformatting a
// copy of *v if it needs it.
func validUTF8(v *jsontext.Value) {
	if len(*v) > 0 && !v.IsValid() {
		*v = v.Clone()
		v.Format(jsontext.AllowInvalidUTF8(true)) // v was decoded with this option: it cannot fail
	}
}

// validID reports whether id is a JSON string or integer, the ids JSON-RPC
// requests carry.
func validID(id jsontext.Value) bool {
	switch id.Kind() {
	case '"':
		return true
	case '0':
		_, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil
	}
	return false
}

// responseLine returns the line that answers the backend's request id:
// result, or the error, an *RPCError as it is and any other as -32603
// with its text.
func responseLine(id, result jsontext.Value, err error) []byte {
	type rpcError struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data,omitzero"`
	}
	msg := struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      jsontext.Value `json:"id"`
		Result  jsontext.Value `json:"result,omitzero"`
		Error   *rpcError      `json:"error,omitzero"`
	}{JSONRPC: "2.0", ID: id, Result: result}
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = &RPCError{Code: -32603, Message: err.Error()}
		}
		msg.Result, msg.Error = nil, &rpcError{re.Code, re.Message, re.Data}
	} else if len(result) == 0 {
		msg.Result = jsontext.Value("null")
	}
	b, merr := json.Marshal(&msg, jsontext.AllowInvalidUTF8(true))
	if merr != nil { // a result that is not JSON: the handler's bug
		b, _ = json.Marshal(&struct {
			JSONRPC string         `json:"jsonrpc"`
			ID      jsontext.Value `json:"id"`
			Error   rpcError       `json:"error"`
		}{"2.0", id, rpcError{Code: -32603, Message: "the client's answer could not be encoded: " + merr.Error()}})
	}
	if bytes.ContainsAny(b, "\r\n") { // white space in a raw value: a line must stay one line
		v := jsontext.Value(b)
		_ = v.Compact() // valid: it was just encoded
		b = v
	}
	return append(b, '\n')
}
