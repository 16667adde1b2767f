package registry

import (
	"context"
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// backendCall is a client's request as the backend client sees it: what
// the backend says during the call goes to the client that made it. The
// backend speaks MCP's methods with MCP's params (docs/backend-protocol.md):
//
//   - notifications/progress and notifications/message become the call's
//     progress and log messages;
//   - elicitation/create, sampling/createMessage and roots/list are asked
//     of the client, named by the request's id when it is a string (the
//     key of a 2026-07-28 input request), and answered with the client's
//     result, or an error the backend can act on.
type backendCall struct {
	*protocol.Call
}

// Notify hands the backend's progress and log messages to the client.
func (b backendCall) Notify(method string, params jsontext.Value) {
	switch method {
	case "notifications/progress":
		var p struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
			Message  string  `json:"message"`
		}
		if json.Unmarshal(params, &p, json.RejectUnknownMembers(false)) == nil {
			b.Progress(p.Progress, p.Total, p.Message)
		}
	case "notifications/message":
		var p struct {
			Level  string         `json:"level"`
			Logger string         `json:"logger"`
			Data   jsontext.Value `json:"data"`
		}
		if json.Unmarshal(params, &p, json.RejectUnknownMembers(false)) != nil || p.Data == nil {
			return
		}
		if level, err := protocol.ParseLogLevel(p.Level); err == nil {
			b.Log(level, p.Logger, p.Data)
		}
	}
}

// Request asks the client what the backend asks, and returns its answer.
func (b backendCall) Request(ctx context.Context, id jsontext.Value, method string, params jsontext.Value) (jsontext.Value, error) {
	name := questionName(id)
	var res jsontext.Value
	var err error
	switch method {
	case "elicitation/create":
		res, err = b.Elicit(ctx, name, params)
	case "sampling/createMessage":
		res, err = b.Sample(ctx, name, params)
	case "roots/list":
		res, err = b.Roots(ctx, name, params)
	default:
		return nil, &socketclient.RPCError{Code: protocol.CodeMethodNotFound, Message: "the bridge takes no such request from the backend: " + method}
	}
	if err == nil {
		return res, nil
	}
	var e *protocol.Error
	switch {
	case errors.As(err, &e):
		return nil, &socketclient.RPCError{Code: e.Code, Message: e.Message, Data: e.Data}
	case errors.Is(err, protocol.ErrNotSupported):
		return nil, &socketclient.RPCError{Code: protocol.CodeMethodNotFound, Message: err.Error()}
	}
	return nil, err
}

// questionName is the name of the backend's question id in the call's
// questions: the id itself when it is a string, so that a backend names
// its questions ("user_name"), else "request-" and the number. The
// bridge's own confirmation is named "confirm": a backend's "confirm" is
// named otherwise.
func questionName(id jsontext.Value) string {
	var s string
	switch {
	case id.Kind() != '"' || json.Unmarshal(id, &s) != nil || s == "" || len(s) > 64:
		return "request-" + string(id) // a number: the socket client takes no other id
	case s == "confirm":
		return "backend-confirm"
	}
	return s
}
