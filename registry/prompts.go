package registry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// Prompts returns the prompts clients see, waiting for the first load;
// part of protocol.PromptProvider.
func (r *Registry) Prompts() *protocol.PromptSet {
	<-r.loaded
	return r.snap.Load().prompts
}

// GetPrompt fills in a served prompt: each {argument} of its texts is
// replaced by the argument's value, and each resource it embeds is read
// as resources/read would read it (the URI filled in likewise), within
// the call timeout. An unknown prompt or argument, a required argument
// missing or empty, or an embedded resource that does not exist wrap
// protocol.ErrInvalidParams; a resource that cannot be read is its read's
// error. Part of protocol.PromptProvider.
func (r *Registry) GetPrompt(ctx context.Context, call *protocol.Call, req *protocol.GetPromptRequest) (*protocol.GetPromptResult, error) {
	return r.getPromptIn(ctx, call, req, r.Snapshot)
}

// getPromptIn is GetPrompt in the snapshot current returns.
func (r *Registry) getPromptIn(ctx context.Context, call *protocol.Call, req *protocol.GetPromptRequest, current func() *Snapshot) (*protocol.GetPromptResult, error) {
	if err := r.waitLoadedErr(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	r.started(call, audit.KindPrompt, req.Name, start)
	snap := current()
	e := snap.byPrompt[req.Name]
	res, did, err := r.getPrompt(ctx, call, snap, e, req)
	r.log.Debug().Str("prompt", logURI(req.Name)).Dur("dur", time.Since(start)).Str("outcome", did.outcome).Msg("prompt")
	if did.outcome == outcomeNotFound && snap.filtered("prompt", req.Name) {
		did.outcome = outcomeRefused
	}
	r.recordPrompt(call, req, start, e, did)
	return res, err
}

// getPrompt fills in e, the prompt req names (nil when none is served),
// and says what it did as a read does.
func (r *Registry) getPrompt(ctx context.Context, call *protocol.Call, snap *Snapshot, e *PromptEntry, req *protocol.GetPromptRequest) (*protocol.GetPromptResult, aRead, error) {
	if e == nil {
		return nil, aRead{outcome: outcomeNotFound}, fmt.Errorf("%w: unknown prompt %q", protocol.ErrInvalidParams, req.Name)
	}
	p := e.Prompt
	for _, name := range slices.Sorted(maps.Keys(req.Arguments)) {
		if _, ok := p.Argument(name); !ok {
			return nil, aRead{outcome: outcomeInvalidArguments}, fmt.Errorf("%w: prompt %s has no argument %q (%s)", protocol.ErrInvalidParams, e.Name, name, argumentNames(e))
		}
	}
	for _, a := range p.Arguments {
		if a.Required && req.Arguments[a.Name] == "" {
			return nil, aRead{outcome: outcomeInvalidArguments}, fmt.Errorf("%w: prompt %s needs argument %q", protocol.ErrInvalidParams, e.Name, a.Name)
		}
	}
	ctx, cancel := call.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	res := &protocol.GetPromptResult{Description: p.Description}
	did := aRead{outcome: outcomeOK}
	for _, msg := range p.Messages {
		if msg.Text != nil {
			text := p.Fill(*msg.Text, req.Arguments)
			did.bytesOut += len(text)
			res.Messages = append(res.Messages, protocol.PromptMessage{Role: msg.Role, Text: text})
			continue
		}
		uri := p.Fill(msg.Resource, req.Arguments)
		contents, read, err := r.read(ctx, call, snap, uri)
		did.bytesOut += read.bytesOut
		if err != nil {
			r.log.Info().Str("prompt", e.Name).Str("uri", logURI(uri)).Err(err).Msg("prompt's resource not read")
			we := *protocol.WireError(err)
			did.outcome, did.backendErr = read.outcome, read.backendErr
			if errors.Is(err, protocol.ErrResourceNotFound) {
				// The prompt exists: what does not is what its
				// arguments point at.
				we.Code, we.Message = protocol.CodeInvalidParams, err.Error()
				did.outcome = outcomeInvalidArguments
			}
			we.Message = fmt.Sprintf("prompt %s embeds %s: %s", e.Name, logURI(uri), we.Message)
			return nil, did, &we
		}
		for i := range contents {
			res.Messages = append(res.Messages, protocol.PromptMessage{Role: msg.Role, Resource: &contents[i]})
		}
	}
	return res, did, nil
}

// argumentNames lists a prompt's arguments for messages.
func argumentNames(e *PromptEntry) string {
	if len(e.Prompt.Arguments) == 0 {
		return "it has none"
	}
	var names []string
	for _, a := range e.Prompt.Arguments {
		names = append(names, a.Name)
	}
	return "it has " + strings.Join(names, ", ")
}

// completeParams are the params of a backend completion method: the
// argument being completed, what the user typed so far, and the values of
// the other arguments already given.
type completeParams struct {
	Argument  string            `json:"argument"`
	Value     string            `json:"value"`
	Arguments map[string]string `json:"arguments,omitzero"`
}

// Complete completes an argument of a served prompt, or a variable of a
// served template (named by its uriTemplate), by calling the completion
// method the manifest gives it; an argument without one gets no values.
// The backend's result is an array of strings, or an object with such an
// array as "values" and, optionally, "total" and "hasMore". Part of
// protocol.CompletionProvider.
func (r *Registry) Complete(ctx context.Context, call *protocol.Call, req *protocol.CompleteRequest) (*protocol.CompleteResult, error) {
	return r.complete(ctx, call, req, r.Snapshot)
}

// complete is Complete in the snapshot current returns.
func (r *Registry) complete(ctx context.Context, call *protocol.Call, req *protocol.CompleteRequest, current func() *Snapshot) (*protocol.CompleteResult, error) {
	if err := r.waitLoadedErr(ctx); err != nil {
		return nil, err
	}
	snap := current()
	var what string
	var names []string
	var complete map[string]string
	switch {
	case req.Prompt != "":
		e, ok := snap.byPrompt[req.Prompt]
		if !ok {
			return nil, fmt.Errorf("%w: unknown prompt %q", protocol.ErrInvalidParams, req.Prompt)
		}
		what, complete = "prompt "+e.Name, e.Complete
		for _, a := range e.Prompt.Arguments {
			names = append(names, a.Name)
		}
	default:
		e, ok := snap.byTemplate[req.URI]
		if !ok {
			if _, ok := snap.byURI[req.URI]; ok {
				return &protocol.CompleteResult{}, nil // a resource has no arguments to complete
			}
			return nil, fmt.Errorf("%w: no resource template %q", protocol.ErrInvalidParams, logURI(req.URI))
		}
		what, complete, names = "template "+e.Template.URITemplate, e.Complete, e.Template.Template.Variables()
	}
	if !slices.Contains(names, req.Argument) {
		return nil, fmt.Errorf("%w: %s has no argument %q", protocol.ErrInvalidParams, what, req.Argument)
	}
	method := complete[req.Argument]
	if method == "" {
		return &protocol.CompleteResult{}, nil
	}
	if r.opts.Backend == nil {
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: "No backend is configured for this bridge."}
	}
	ctx, cancel := call.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	params, _ := json.Marshal(completeParams{req.Argument, req.Value, req.Context}, json.Deterministic(true))
	start := time.Now()
	result, err := r.callBackend(ctx, call, method, params)
	outcome := outcomeOK
	defer func() {
		r.log.Debug().Str("complete", what).Str("argument", req.Argument).Str("backend_method", method).
			Dur("dur", time.Since(start)).Str("outcome", outcome).Msg("completion")
	}()
	if err != nil {
		var msg string
		msg, outcome = r.backendFailure(ctx, call, "complete", what, method, "complete again", err)
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: msg}
	}
	res, err := completion(result)
	if err != nil {
		outcome = outcomeContractBroken
		r.log.Warn().Err(err).Str("backend_method", method).Msg("backend result is not a completion")
		return nil, &protocol.Error{Code: protocol.CodeInternalError,
			Message: fmt.Sprintf("The backend's result for %s is not a completion: %v", method, err)}
	}
	return res, nil
}

// completion reads a backend's completion result: ["a", "b"], or
// {"values": ["a", "b"], "total": 10, "hasMore": true}.
func completion(result jsontext.Value) (*protocol.CompleteResult, error) {
	res := &protocol.CompleteResult{}
	var err error
	if result.Kind() == '[' {
		err = json.Unmarshal(result, &res.Values)
	} else {
		err = json.Unmarshal(result, res, json.RejectUnknownMembers(true))
	}
	if err != nil {
		return nil, errors.New(`want an array of strings, or an object with "values" (an array of strings), "total" and "hasMore"`)
	}
	return res, nil
}
