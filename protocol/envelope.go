package protocol

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Envelope is what a transport may need to know of a message before it
// hands it to a session: its kind, method and the params it routes by.
type Envelope struct {
	// Method is the request's or notification's method; "" for a
	// response from the client.
	Method string
	// Request reports a message that gets a response: a request, or a
	// batch holding one.
	Request bool
	// Calls counts the requests of the message that are calls (tools/call,
	// resources/read, prompts/get, completion/complete), each counted by
	// a client's rate of calls: 0 or 1, or a batch's number.
	Calls int
	// ID is a request's id, as sent.
	ID jsontext.Value
	// Batch reports a JSON array of messages.
	Batch bool
	// Name is params.name (tools/call, prompts/get), params.uri
	// (resources/read) or params.taskId (tasks/*).
	Name string
	// ProtocolVersion is params._meta's io.modelcontextprotocol/protocolVersion.
	ProtocolVersion string
	// MetaErr is, for a request whose ProtocolVersion is a modern one,
	// why the rest of its _meta is malformed (-32602), or nil. Handle
	// answers such a request with this error; HTTP answers it 400 Bad
	// Request, so it needs to know first.
	MetaErr error
}

// Inspect reads msg's envelope, with the rules Handle uses. An error is
// one the message's response would carry: the message is not JSON, not a
// JSON-RPC message, or has invalid params.
func Inspect(msg []byte) (Envelope, error) {
	var env Envelope
	if msg = bytes.TrimSpace(msg); len(msg) > 0 && msg[0] == '[' {
		var elems []jsontext.Value
		if err := json.Unmarshal(msg, &elems, lenient, jsontext.AllowDuplicateNames(true)); err != nil {
			return env, &Error{Code: CodeParseError, Message: describe(err)}
		}
		env.Batch = true
		if len(elems) == 0 {
			// Answered whole, as a session answers it: there is no
			// element to answer.
			return env, &Error{Code: CodeInvalidRequest, Message: "empty batch"}
		}
		for _, e := range elems {
			rq, ignore, _, err := decodeMessage(e)
			if err != nil || !ignore && rq.reply == nil && rq.id != nil {
				env.Request = true
			}
			if err == nil && !ignore && rq.reply == nil && rq.isCall() {
				env.Calls++
			}
		}
		return env, nil
	}
	rq, ignore, _, err := decodeMessage(msg)
	if err != nil {
		return env, WireError(err)
	}
	if ignore || rq.reply != nil {
		return env, nil // a response, or a notification MCP cannot read
	}
	env.Method, env.Request, env.ID = rq.method, rq.id != nil, rq.id
	if rq.isCall() {
		env.Calls = 1
	}
	if rq.params != nil {
		var p struct {
			Name   string      `json:"name"`
			URI    string      `json:"uri"`
			TaskID string      `json:"taskId"`
			Meta   requestMeta `json:"_meta"`
		}
		opts := json.JoinOptions(jsontext.AllowInvalidUTF8(rq.lenient), json.RejectUnknownMembers(false))
		if err := json.Unmarshal(rq.params, &p, opts); err == nil {
			env.Name, env.ProtocolVersion = p.Name, p.Meta.ProtocolVersion
			switch {
			case env.Method == "resources/read":
				env.Name = p.URI
			case strings.HasPrefix(env.Method, "tasks/"):
				env.Name = p.TaskID
			}
			if IsModernVersion(env.ProtocolVersion) {
				_, env.MetaErr = p.Meta.checkModern(env.Method)
			}
		}
	}
	return env, nil
}

// isCall reports whether rq is a request that runs as a call: one a rate
// of calls counts, which a session refuses past it (see
// SessionOptions.Admit).
func (rq *request) isCall() bool {
	return rq.id != nil && methods[rq.method].flags&concurrent != 0
}
