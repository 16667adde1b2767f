package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
)

// JSON-RPC error codes. The first five are the specification's; the
// others are the custom codes the real Tairseach server uses.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeShuttingDown   = -32000
	codeNotFound       = -32004
	codePermission     = -32011
)

// rpcError is an error with a JSON-RPC code; it is sent as the response's
// error object as is.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// invalidParams returns a -32602 error whose message says what is wrong.
func invalidParams(format string, args ...any) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "invalid params: " + fmt.Sprintf(format, args...)}
}

// wireError turns any handler error into the error object sent to the
// client; errors without a code become -32603 (their detail is logged, not
// sent).
func wireError(err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	return &rpcError{Code: codeInternalError, Message: "internal error"}
}

// handler runs one method. params is the request's params member as sent
// (nil when absent); p is the client, which the handler may speak to
// before it returns (nil for a request of a batch). The result is
// marshalled as the response's result.
type handler func(ctx context.Context, params json.RawMessage, p *peer) (any, error)

// response is one JSON-RPC response object. ID holds the request's id
// bytes exactly as sent (or null).
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

var nullID = json.RawMessage("null")

func errorResponse(id json.RawMessage, e *rpcError) *response {
	return &response{JSONRPC: "2.0", ID: id, Error: e}
}

// dispatcher answers JSON-RPC lines with a method table. It is safe for
// concurrent use if the handlers are.
type dispatcher struct {
	methods map[string]handler
	log     zerolog.Logger
	// onHandle, when set (tests only), is called as a handler starts.
	onHandle func(method string)
}

// handleLine answers one line: a request, a notification or a batch, read
// from p's connection. It returns the response to write (a *response or
// a []*response), or nil when nothing is to be written (a notification,
// or a batch of them). The requests of a batch cannot speak to p.
func (d *dispatcher) handleLine(ctx context.Context, line []byte, p *peer) any {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return errorResponse(nullID, &rpcError{Code: codeParseError, Message: "parse error: the line is not valid JSON"})
	}
	if line[0] != '[' {
		// Not "return d.handleMessage(…)": a nil *response in an any is not nil.
		if r := d.handleMessage(ctx, line, p); r != nil {
			return r
		}
		return nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil {
		// Unreachable: the line is valid JSON and starts with '['.
		return errorResponse(nullID, &rpcError{Code: codeParseError, Message: "parse error: " + err.Error()})
	}
	if len(batch) == 0 {
		return errorResponse(nullID, &rpcError{Code: codeInvalidRequest, Message: "invalid request: empty batch"})
	}
	var out []*response
	for _, msg := range batch {
		if r := d.handleMessage(ctx, msg, nil); r != nil {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// handleMessage answers one request object; it returns nil for a
// notification (a request without an id member), whatever its outcome.
func (d *dispatcher) handleMessage(ctx context.Context, msg json.RawMessage, p *peer) *response {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(msg, &env); err != nil || env == nil {
		return errorResponse(nullID, &rpcError{Code: codeInvalidRequest, Message: "invalid request: a request must be a JSON object"})
	}
	id, hasID := env["id"]
	if hasID && !validID(id) {
		return errorResponse(nullID, &rpcError{Code: codeInvalidRequest, Message: "invalid request: id must be a string, a number or null"})
	}
	if !hasID {
		id = nullID
	}
	var version, method string
	if json.Unmarshal(env["jsonrpc"], &version) != nil || version != "2.0" {
		return errorResponse(id, &rpcError{Code: codeInvalidRequest, Message: `invalid request: jsonrpc must be "2.0"`})
	}
	if json.Unmarshal(env["method"], &method) != nil || method == "" {
		return errorResponse(id, &rpcError{Code: codeInvalidRequest, Message: "invalid request: method must be a non-empty string"})
	}
	params := env["params"]
	if bytes.Equal(params, nullID) {
		params = nil // Some clients send "params": null for "no params".
	}
	if params != nil && params[0] != '{' && params[0] != '[' {
		return errorResponse(id, &rpcError{Code: codeInvalidRequest, Message: "invalid request: params must be an object or an array"})
	}

	start := time.Now()
	result, err := d.call(ctx, method, params, p)
	dur := time.Since(start)

	ev := d.log.Debug()
	if err != nil {
		we := wireError(err)
		if we.Code == codeInternalError {
			ev = d.log.Error().Err(err)
		}
		ev = ev.Str("outcome", "error").Int("code", we.Code)
	} else {
		ev = ev.Str("outcome", "ok")
	}
	ev.Str("method", method).RawJSON("id", id).Bool("notification", !hasID).Dur("dur", dur).Msg("request")
	if tr := d.log.Trace(); tr.Enabled() {
		tr = tr.Str("method", method).RawJSON("id", id)
		if params != nil {
			tr = tr.RawJSON("params", params)
		}
		if b, mErr := json.Marshal(result); err == nil && mErr == nil {
			tr = tr.RawJSON("result", b)
		}
		tr.Msg("request detail")
	}

	if !hasID {
		return nil
	}
	if err != nil {
		return errorResponse(id, wireError(err))
	}
	return &response{JSONRPC: "2.0", ID: id, Result: result}
}

// call runs the method's handler, turning a panic into an internal error.
func (d *dispatcher) call(ctx context.Context, method string, params json.RawMessage, p *peer) (result any, err error) {
	h, ok := d.methods[method]
	if !ok {
		return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in %s: %v\n%s", method, p, debug.Stack())
		}
	}()
	if d.onHandle != nil {
		d.onHandle(method)
	}
	return h(ctx, params, p)
}

// validID reports whether raw is an id JSON-RPC allows: a string, a
// number or null.
func validID(raw json.RawMessage) bool {
	switch c := raw[0]; {
	case c == '"', c == 'n', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}
