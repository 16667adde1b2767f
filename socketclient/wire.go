package socketclient

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// request is a JSON-RPC 2.0 request line as sent.
type request struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      uint64         `json:"id"`
	Method  string         `json:"method"`
	Params  jsontext.Value `json:"params,omitzero"`
}

// encodeRequest returns the request line, newline included. Marshalling
// checks params and writes them compact, so params that hold newlines
// cannot split the line, with their strings as they were written; empty
// params are left out, since a method without parameters may reject
// "params": {}.
func encodeRequest(id uint64, method string, params jsontext.Value) ([]byte, error) {
	if len(bytes.Trim(params, " \t\r\n")) == 0 {
		params = nil
	}
	line, err := json.Marshal(request{JSONRPC: "2.0", ID: id, Method: method, Params: params}, jsontext.PreserveRawStrings(true))
	if err != nil {
		return nil, fmt.Errorf("encode backend request: %w", err)
	}
	return append(line, '\n'), nil
}

// reply is one message from the backend. A member that is absent stays
// nil; a null one is the literal null (for error, a nil pointer: an
// "error": null beside a result, as JSON-RPC 1.0 servers send it, is no
// error).
type reply struct {
	ID     jsontext.Value `json:"id"`
	Method jsontext.Value `json:"method"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    *int64         `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

// notification reports a message from the backend that asks for no
// answer. The backend contract has none, but they are harmless.
func (r *reply) notification() bool { return r.Method != nil && r.ID == nil }

// decodeReply decodes one line from the backend. Member names match
// exactly, and a repeated one is an error rather than a guess at which
// one counts. Unless it is a notification, a reply has exactly one of a
// result and an error, which has a code.
//
// Invalid UTF-8 in strings, escaped lone surrogates included, is accepted
// and replaced with U+FFFD, so the bridge passes on valid JSON text: such
// a result, or error data, is reformatted (and so compacted). A valid
// line, the usual case, is decoded once.
func decodeReply(line []byte) (*reply, error) {
	var r reply
	err := json.Unmarshal(line, &r)
	invalidUTF8 := false
	if err != nil {
		r = reply{}
		if err = json.Unmarshal(line, &r, jsontext.AllowInvalidUTF8(true)); err != nil {
			return nil, err
		}
		invalidUTF8 = true
	}
	switch {
	case r.notification():
		return &r, nil
	case r.Method != nil:
		return nil, errors.New("backend sent a request, not a reply")
	case r.Result != nil && r.Error != nil:
		return nil, errors.New("reply has both result and error")
	case r.Result == nil && r.Error == nil:
		return nil, errors.New("reply has neither result nor error")
	case r.Error != nil && r.Error.Code == nil:
		return nil, errors.New("error object has no code")
	}
	if invalidUTF8 {
		validUTF8(&r.Result)
		if r.Error != nil {
			validUTF8(&r.Error.Data)
		}
	}
	return &r, nil
}

// validUTF8 replaces any invalid UTF-8 in *v with U+FFFD, reformatting
// *v if it needs it.
func validUTF8(v *jsontext.Value) {
	if len(*v) > 0 && !v.IsValid() {
		v.Format(jsontext.AllowInvalidUTF8(true)) // v was decoded with this option: it cannot fail
	}
}
