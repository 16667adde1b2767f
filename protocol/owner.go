package protocol

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The owner is the person whose data sits behind the backend, reachable
// apart from any client: the owner's console. A question for the user
// that the call's client cannot ask (it declared no elicitation) goes to
// the server's Owner, when it has one, instead of being refused with
// CodeMissingCapability: the bridge's own confirmation before a
// destructive call, and a provider's form. The question goes through ask
// like any other, so it is bounded by AskTimeout, its wait does not count
// against the call's own time, and the call's heartbeats say it waits.

// Owner asks the owner questions that a call's client cannot ask. The
// owner's console implements it.
type Owner interface {
	// Ask asks the owner q on behalf of call, and returns the owner's
	// answer as a client would answer elicitation/create (an elicitation
	// result: accept with its content, decline, cancel); or an error
	// wrapping ErrOwnerAway, at once, when no one is there to answer; or
	// ctx's error once ctx ends (the question is then withdrawn). It must
	// be safe for concurrent use.
	Ask(ctx context.Context, call *Call, q OwnerQuestion) (jsontext.Value, error)
}

// OwnerQuestion is a question for the owner.
type OwnerQuestion struct {
	// Confirm marks the bridge's own yes-or-no question before a call
	// runs: the answer's content has one boolean, "confirm". Otherwise
	// it is a provider's form.
	Confirm bool
	// Message is what the owner is asked, as a client would show it.
	Message string
	// Params are the params of elicitation/create (form mode): the
	// message and the requestedSchema of the form.
	Params jsontext.Value
}

// ErrOwnerAway is the error of an Owner that no one can answer now: no
// console is open. Its wrapper says where the owner can answer.
var ErrOwnerAway = errors.New("no owner's console is open to answer")

// AsksOwner reports whether the questions for the user that the call's
// client cannot ask go to the owner instead (see Owner).
func (c *Call) AsksOwner() bool { return c.ownerAsked() != nil }

// ownerAsked returns who answers the questions the call's client cannot
// ask: its session's AskOwner, else the server's Owner, else nil.
func (c *Call) ownerAsked() Owner {
	switch {
	case c.owner != nil:
		return c.owner
	case c.srv != nil:
		return c.srv.Owner
	}
	return nil
}

// toOwner reports whether a question the client cannot ask, method with
// params, goes to the owner: a form, when the server has an owner.
func (c *Call) toOwner(method string, params jsontext.Value) bool {
	if !c.AsksOwner() || method != "elicitation/create" {
		return false
	}
	var p struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(params, &p, json.RejectUnknownMembers(false))
	return p.Mode == "" || p.Mode == "form"
}

// askOwner asks the owner what ask was asked, and maps an absent owner
// to CodeMissingCapability with need (the capability the client lacks)
// and the owner's words on where to answer.
func (c *Call) askOwner(ctx context.Context, params jsontext.Value, need jsontext.Value, confirm bool) (jsontext.Value, error) {
	var p struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(params, &p, json.RejectUnknownMembers(false))
	c.mu.Lock()
	c.askingOwner++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.askingOwner--
		c.mu.Unlock()
	}()
	res, err := c.ownerAsked().Ask(ctx, c, OwnerQuestion{Confirm: confirm, Message: p.Message, Params: params})
	if err != nil && errors.Is(err, ErrOwnerAway) {
		data, _ := json.Marshal(map[string]jsontext.Value{"requiredCapabilities": need}, encodeOpts)
		return nil, fmt.Errorf("%w: %w", &Error{Code: CodeMissingCapability, Message: "the client cannot ask the user", Data: data}, err)
	}
	if err == nil {
		if cerr := checkAnswer("elicitation/create", res); cerr != nil {
			return nil, fmt.Errorf("the owner's console answered %w", cerr)
		}
	}
	return res, err
}

// waitingFor says, for a heartbeat, what the call waits for.
func (c *Call) waitingFor() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.askingOwner > 0 {
		return "the owner's answer on the console"
	}
	return "the backend"
}
