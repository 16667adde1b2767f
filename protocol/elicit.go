package protocol

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Question is what a tool provider asks the user, through the client,
// before it goes on: a yes or no about Message.
type Question struct {
	// Message is shown to the user as it is; it says what will happen.
	Message string
}

// Answer is the user's answer to a Question.
type Answer struct {
	// Action is the client's: "accept" (the user submitted the form),
	// "decline" or "cancel".
	Action string
	// Allowed reports an accepted form whose answer is yes: the only
	// answer that lets the call go ahead.
	Allowed bool
}

// Asker asks the user a Question. It returns when the user answers, or
// with ctx's error when ctx ends first (the question is then withdrawn).
// See Call.Confirm.
type Asker func(ctx context.Context, q Question) (Answer, error)

// ErrInputRequired is Call.Confirm's error in protocol 2026-07-28 when the
// user's answer is not in the request yet: the call keeps the question,
// and the server answers the client with an input_required result that
// asks it, whatever the provider returns.
var ErrInputRequired = errors.New("the user's answer is not in this request yet")

// confirmKey is the name of the one field of a confirmation's form, and
// of its entry among a 2026-07-28 result's inputRequests.
const confirmKey = "confirm"

// elicitParams are the params of elicitation/create for a confirmation:
// a form with one boolean. It asks for no secret.
type elicitParams struct {
	Mode            string     `json:"mode,omitzero"` // from 2025-11-25
	Message         string     `json:"message"`
	RequestedSchema formSchema `json:"requestedSchema"`
}

type formSchema struct {
	Type       string                  `json:"type"`
	Properties map[string]booleanField `json:"properties"`
	Required   []string                `json:"required"`
}

type booleanField struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

func confirmParams(q Question, version string) elicitParams {
	p := elicitParams{Message: q.Message, RequestedSchema: formSchema{
		Type: "object",
		Properties: map[string]booleanField{confirmKey: {Type: "boolean", Title: "Allow",
			Description: "Yes lets the tool run now; no stops it.", Default: false}},
		Required: []string{confirmKey},
	}}
	if version >= Version20251125 {
		p.Mode = "form"
	}
	return p
}

// elicitResult is the client's answer to elicitation/create.
type elicitResult struct {
	Action  string                    `json:"action"`
	Content map[string]jsontext.Value `json:"content"`
}

// answerOf reads the client's answer to a confirmation.
func answerOf(raw jsontext.Value) (Answer, error) {
	var r elicitResult
	if err := json.Unmarshal(raw, &r, json.RejectUnknownMembers(false)); err != nil {
		return Answer{}, fmt.Errorf("a malformed answer to the confirmation: %s", describe(err))
	}
	switch r.Action {
	case "accept", "decline", "cancel":
	default:
		return Answer{}, fmt.Errorf("an answer to the confirmation with action %q", r.Action)
	}
	return Answer{Action: r.Action, Allowed: r.Action == "accept" && string(r.Content[confirmKey]) == "true"}, nil
}
