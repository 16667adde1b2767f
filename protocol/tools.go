package protocol

import (
	"context"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type listParams struct {
	metaParams
	Cursor *string `json:"cursor"`
}

type listToolsResult struct {
	Tools      []jsontext.Value `json:"tools"`
	NextCursor string           `json:"nextCursor,omitzero"`
	resultTail
}

func (r *listToolsResult) takeItems() (string, []jsontext.Value) {
	items := r.Tools
	r.Tools = nil
	return "tools", items
}

// listTools answers tools/list, a page at a time (see page).
func (ss *session) listTools(_ context.Context, rq *request, p *listParams) (*listToolsResult, error) {
	items, next, err := page(ss, rq, &ss.srv.Tools.Tools().catalogue, p.Cursor, "tool list")
	if err != nil {
		return nil, err
	}
	return &listToolsResult{Tools: items, NextCursor: next}, nil
}

type callParams struct {
	metaParams
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
}

type callToolResult struct {
	CallToolResult
	resultTail
}

// callTool answers tools/call: it asks the tool provider, and sends
// progress heartbeats meanwhile when the request carries a progress token.
func (ss *session) callTool(ctx context.Context, rq *request, p *callParams) (*callToolResult, error) {
	if p.Name == "" {
		return nil, fmt.Errorf(`%w: tools/call: "name" is required`, ErrInvalidParams)
	}
	args := p.Arguments
	switch args.Kind() {
	case 'n':
		args = nil
	case 0, '{':
	default:
		return nil, fmt.Errorf(`%w: tools/call: "arguments" must be an object`, ErrInvalidParams)
	}
	if rq.lenient && args != nil && !args.IsValid() {
		// Passed on as they are, so held to the strict rules.
		err := json.Unmarshal(args, new(jsontext.Value))
		return nil, fmt.Errorf(`%w: tools/call: "arguments": %s`, ErrInvalidParams, describe(err))
	}
	if token := p.Meta.ProgressToken; validID(token) {
		// A string or an integer, as the schema says, so what makes a
		// valid request id. Anything else (null, which some clients send
		// for "none", an object, a fraction) is no token: echoed, it would
		// make notifications the client finds invalid.
		stop := ss.heartbeat(token)
		defer stop()
	}
	start := time.Now()
	res, err := ss.srv.Tools.CallTool(ctx, &CallToolRequest{Name: p.Name, Arguments: args, ProtocolVersion: rq.version})
	if err != nil {
		return nil, err
	}
	ss.log.Debug().Str("tool", p.Name).Dur("dur", time.Since(start)).Bool("is_error", res.IsError).Msg("tool call")
	out := &callToolResult{CallToolResult: *res}
	if rq.shape() < shapeStructured {
		out.StructuredContent = nil
	}
	return out, nil
}

type progressParams struct {
	ProgressToken jsontext.Value `json:"progressToken"`
	Progress      int            `json:"progress"`
	Message       string         `json:"message"`
}

// heartbeat sends notifications/progress every ProgressInterval until
// stop is called. Some hosts reset their request timeout on progress.
func (ss *session) heartbeat(token jsontext.Value) (stop func()) {
	interval := orDefault(ss.srv.ProgressInterval, DefaultProgressInterval)
	if interval < 0 {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	// Owned by the call: stop waits for it, so that no progress
	// notification follows the call's response.
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		start := time.Now()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-t.C:
			}
			msg := fmt.Sprintf("waiting for the backend (%ds)", int(time.Since(start).Seconds()))
			ss.out.send(encodeNotification("notifications/progress", &progressParams{token, n, msg}))
		}
	}()
	return func() { close(done); <-exited }
}
