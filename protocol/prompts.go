package protocol

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Prompt is one prompt as a client sees it. A client is sent the fields
// its protocol version has: titles from 2025-06-18.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitzero"`
	Description string           `json:"description,omitzero"`
	Arguments   []PromptArgument `json:"arguments,omitzero"`
}

// PromptArgument is one argument of a prompt; its value is a string.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	Required    bool   `json:"required,omitzero"`
}

func (p Prompt) encode(s shape) jsontext.Value {
	if s < shapeStructured {
		p.Title = ""
		args := make([]PromptArgument, len(p.Arguments))
		for i, a := range p.Arguments {
			a.Title = ""
			args[i] = a
		}
		p.Arguments = args
	}
	b, _ := json.Marshal(p, encodeOpts) // strings and booleans: it cannot fail
	return b
}

// PromptSet is an immutable list of prompts, in the order clients see
// them. Like a ToolSet, one should be built per change and shared. It is
// safe for concurrent use.
type PromptSet struct{ catalogue[Prompt] }

// NewPromptSet returns a PromptSet holding prompts in the given order.
func NewPromptSet(prompts []Prompt) *PromptSet { return &PromptSet{catalogue[Prompt]{items: prompts}} }

// Prompts returns the prompts; the caller must not modify the slice.
func (ps *PromptSet) Prompts() []Prompt { return ps.items }

// Equal reports whether two sets look the same to clients of any version.
func (ps *PromptSet) Equal(other *PromptSet) bool {
	if ps == nil || other == nil {
		return ps == other
	}
	return ps.equal(&other.catalogue)
}

// PromptMessage is one message of a prompt: text, or an embedded
// resource's contents.
type PromptMessage struct {
	Role string // "user" or "assistant"
	// Resource, when it is not nil, is the message's content; else Text.
	Text     string
	Resource *ResourceContents
}

// MarshalJSONTo encodes the message with a TextContent or an
// EmbeddedResource as its content.
func (m PromptMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type embedded struct {
		Type     string            `json:"type"`
		Resource *ResourceContents `json:"resource"`
	}
	var content any = text{"text", m.Text}
	if m.Resource != nil {
		content = embedded{"resource", m.Resource}
	}
	return json.MarshalEncode(enc, struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}{m.Role, content})
}

// GetPromptRequest is what the server passes to a PromptProvider.
type GetPromptRequest struct {
	Name string
	// Arguments are the client's, by name; nil when it sent none.
	Arguments map[string]string
}

// GetPromptResult is a prompt filled in with its arguments.
type GetPromptResult struct {
	Description string          `json:"description,omitzero"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptProvider is what the server needs to serve prompts.
// Implementations must be safe for concurrent use.
type PromptProvider interface {
	// Prompts returns the current prompts. Like ToolProvider.Tools it
	// runs on the session's reader: it may wait for a first load, but
	// must not block on I/O after it.
	Prompts() *PromptSet
	// GetPrompt fills in a prompt. An unknown prompt, or arguments that
	// do not fit it (a required one missing), are errors wrapping
	// ErrInvalidParams; so is anything else that goes wrong (a resource
	// the prompt embeds cannot be read), with the code that says what it
	// is. call is the request's Call: what the prompt's embedded
	// resources read is counted with its Grow. The result then belongs
	// to the server.
	GetPrompt(ctx context.Context, call *Call, req *GetPromptRequest) (*GetPromptResult, error)
}

type listPromptsResult struct {
	Prompts    []jsontext.Value `json:"prompts"`
	NextCursor string           `json:"nextCursor,omitzero"`
	resultTail
}

func (r *listPromptsResult) encodeMessage(id jsontext.Value) (Message, error) {
	return encodeList(id, r)
}

func (r *listPromptsResult) takeItems() (string, []jsontext.Value) {
	items := r.Prompts
	r.Prompts = nil
	return "prompts", items
}

// noPrompts is what a server without a PromptProvider serves.
var noPrompts = NewPromptSet(nil)

// listPrompts answers prompts/list, a page at a time (see page).
func (ss *Session) listPrompts(_ context.Context, rq *request, p *listParams) (*listPromptsResult, error) {
	set := noPrompts
	if ss.prompts != nil {
		set = ss.prompts.Prompts()
	}
	items, next, err := page(ss, rq, &set.catalogue, p.Cursor, "prompt list")
	if err != nil {
		return nil, err
	}
	return &listPromptsResult{Prompts: items, NextCursor: next}, nil
}

type getPromptParams struct {
	metaParams
	inputParams
	Name      *string           `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

type getPromptResult struct {
	GetPromptResult
	resultTail
	inputOr `json:"-"` // instead, in 2026-07-28: ask the client first
}

// encodeMessage encodes a prompts/get response, or the input_required
// result that asks first.
func (res *getPromptResult) encodeMessage(id jsontext.Value) (Message, error) {
	if m, ok, err := res.encodeInput(id, res.resultTail); ok {
		return m, err
	}
	b, err := encodeResult(id, res)
	return msgOf(b, nil), err
}

// getPrompt answers prompts/get through the prompt provider.
func (ss *Session) getPrompt(ctx context.Context, rq *request, p *getPromptParams) (*getPromptResult, error) {
	if p.Name == nil {
		return nil, fmt.Errorf(`%w: prompts/get: "name" is required`, ErrInvalidParams)
	}
	if ss.prompts == nil {
		return nil, fmt.Errorf("%w: unknown prompt %q: this server offers no prompts", ErrInvalidParams, *p.Name)
	}
	args, _ := json.Marshal(p.Arguments, json.Deterministic(true))
	key := stateKey{"prompts/get", *p.Name, args}
	res, input, ran, err := runAsking(ss, ctx, rq, &rq.flight.call, &p.inputParams, key, func(ctx context.Context, call *Call) (*GetPromptResult, error) {
		return ss.prompts.GetPrompt(ctx, call, &GetPromptRequest{Name: *p.Name, Arguments: p.Arguments})
	})
	ran.flushProgress()
	if input != nil {
		return &getPromptResult{inputOr: inputOr{input}}, nil
	}
	if err != nil {
		return nil, err
	}
	return &getPromptResult{GetPromptResult: *res}, nil
}
