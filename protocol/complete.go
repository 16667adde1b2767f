package protocol

import (
	"context"
	"fmt"
)

// MaxCompletions is the most values one completion/complete result
// holds, as MCP allows.
const MaxCompletions = 100

// CompleteRequest asks for the values that complete one argument of a
// prompt, or one variable of a resource template.
type CompleteRequest struct {
	// Prompt names the prompt, or URI the resource template (its
	// uriTemplate) or resource, whose argument is completed; one is set.
	Prompt, URI string
	// Argument is the argument's name, Value what the user typed so far.
	Argument, Value string
	// Context holds the other arguments' values already given; nil when
	// the client sent none.
	Context map[string]string
}

// CompleteResult is the completion of one argument: at most
// MaxCompletions values, best first.
type CompleteResult struct {
	Values []string `json:"values"`
	// Total counts every value there is, when known (0: not said).
	Total int `json:"total,omitzero"`
	// HasMore says that there are values beyond Values.
	HasMore bool `json:"hasMore,omitzero"`
}

// CompletionProvider is what the server needs to answer
// completion/complete. Implementations must be safe for concurrent use.
type CompletionProvider interface {
	// Complete completes one argument. An unknown prompt, template or
	// argument is an error wrapping ErrInvalidParams; an argument that
	// has no completion gets no values. Anything else that goes wrong is
	// an error too, an *Error with the code that says what it is.
	// call is the request's Call.
	Complete(ctx context.Context, call *Call, req *CompleteRequest) (*CompleteResult, error)
}

type completeParams struct {
	metaParams
	Ref *struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref"`
	Argument *struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context struct {
		Arguments map[string]string `json:"arguments"`
	} `json:"context"`
}

type completeResult struct {
	Completion CompleteResult `json:"completion"`
	resultTail
}

// complete answers completion/complete through the completion provider.
func (ss *Session) complete(ctx context.Context, rq *request, p *completeParams) (*completeResult, error) {
	if ss.completions == nil {
		return nil, fmt.Errorf("%w: this server offers no completions", ErrMethodNotFound)
	}
	if p.Ref == nil || p.Argument == nil {
		return nil, fmt.Errorf(`%w: completion/complete: "ref" and "argument" are required`, ErrInvalidParams)
	}
	req := &CompleteRequest{Argument: p.Argument.Name, Value: p.Argument.Value, Context: p.Context.Arguments}
	switch p.Ref.Type {
	case "ref/prompt":
		req.Prompt = p.Ref.Name
	case "ref/resource":
		req.URI = p.Ref.URI
	default:
		return nil, fmt.Errorf(`%w: completion/complete: unknown ref type %q (want "ref/prompt" or "ref/resource")`, ErrInvalidParams, p.Ref.Type)
	}
	res, err := ss.completions.Complete(ctx, &rq.flight.call, req)
	if err != nil {
		return nil, err
	}
	out := &completeResult{Completion: *res}
	if c := &out.Completion; len(c.Values) > MaxCompletions {
		c.Total = max(c.Total, len(c.Values))
		c.Values, c.HasMore = c.Values[:MaxCompletions], true
	} else if c.Values == nil {
		c.Values = []string{}
	}
	return out, nil
}
