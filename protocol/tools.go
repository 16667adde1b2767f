package protocol

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

func (r *listToolsResult) encodeMessage(id jsontext.Value) (Message, error) { return encodeList(id, r) }

func (r *listToolsResult) takeItems() (string, []jsontext.Value) {
	items := r.Tools
	r.Tools = nil
	return "tools", items
}

// listTools answers tools/list, a page at a time (see page).
func (ss *Session) listTools(_ context.Context, rq *request, p *listParams) (*listToolsResult, error) {
	items, next, err := page(ss, rq, &ss.tools.Tools().catalogue, p.Cursor, "tool list")
	if err != nil {
		return nil, err
	}
	return &listToolsResult{Tools: items, NextCursor: next}, nil
}

type callParams struct {
	metaParams
	inputParams
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Task      *taskParams    `json:"task"` // 2025-11-25: run it as a task
}

type callToolResult struct {
	CallToolResult
	resultTail
	inputOr `json:"-"`   // instead, in 2026-07-28: ask the client first
	created *createdTask // instead: the call became this task
}

// callTool answers tools/call: it asks the tool provider, and sends
// progress heartbeats meanwhile when the request carries a progress token.
func (ss *Session) callTool(ctx context.Context, rq *request, p *callParams) (*callToolResult, error) {
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
	call := &rq.flight.call
	if rq.modern && call.CanConfirm() {
		call.modern = &modernAsk{}
	}
	t, err := ss.taskPlan(rq, call, p)
	if err != nil {
		return nil, err
	}
	if call.at.progress != nil {
		stop := call.heartbeat()
		defer stop()
	}
	start := time.Now()
	key := stateKey{"tools/call", p.Name, args}
	var res *CallToolResult
	var input *inputRequiredResult
	var ran *Call
	if t != nil {
		p.Arguments = args
		if res, input, ran, err = ss.callAsTask(ctx, rq, call, p, t, key); errors.Is(err, errBecomeTask) {
			out := &callToolResult{created: rq.task.createdResult(rq)}
			if rq.modern {
				out.ResultType = "task"
			}
			return out, nil
		}
	} else {
		res, input, ran, err = runAsking(ss, ctx, rq, call, &p.inputParams, key, func(ctx context.Context, call *Call) (*CallToolResult, error) {
			return ss.tools.CallTool(ctx, call, &CallToolRequest{Name: p.Name, Arguments: args})
		})
	}
	ran.flushProgress()
	if q := ran.pending(); q != nil {
		// Whatever the provider returned: it was told to stop there.
		ss.log.Debug().Str("tool", p.Name).Msg("tool call asks the user first")
		input, err = ss.confirmation(q, ran, key)
	}
	if input != nil || err != nil {
		return &callToolResult{inputOr: inputOr{input}}, err
	}
	ss.log.Debug().Str("tool", p.Name).Dur("dur", time.Since(start)).Bool("is_error", res.IsError).Msg("tool call")
	out := &callToolResult{CallToolResult: *res}
	if rq.shape() < shapeStructured {
		out.StructuredContent = nil
	}
	return out, nil
}

// capsOf returns what the client that sent rq can be asked: in the modern
// era as the request's _meta says, else as initialize said.
func (ss *Session) capsOf(rq *request, m *requestMeta) clientCaps {
	if rq.modern {
		return capsOf(m.ClientCapabilities)
	}
	if p := ss.caps.Load(); p != nil {
		return *p
	}
	return clientCaps{}
}

// clientOf returns the client that sent rq: in the modern era as its
// _meta says (a malformed clientInfo, which only names the client, is
// taken as none rather than failing the request), else as initialize
// said.
func (ss *Session) clientOf(rq *request, m *requestMeta) ClientInfo {
	if rq.modern {
		return decodeClientInfo(m.ClientInfo)
	}
	if p := ss.client.Load(); p != nil {
		return *p
	}
	return ClientInfo{}
}

// decodeClientInfo decodes a clientInfo, or returns none. (Apart from
// clientOf, so that only the modern era's calls pay for the allocation.)
func decodeClientInfo(v jsontext.Value) (c ClientInfo) {
	if v != nil {
		_ = json.Unmarshal(v, &c)
	}
	return c
}

// newSessionID returns a random session id: 16 hex digits.
func newSessionID() string {
	return fmt.Sprintf("%016x", rand.Uint64())
}

type progressParams struct {
	ProgressToken jsontext.Value `json:"progressToken"`
	Progress      float64        `json:"progress"`
	Total         float64        `json:"total,omitzero"`
	Message       string         `json:"message,omitzero"`
}

// heartbeat sends notifications/progress every ProgressInterval until
// stop is called, each one above the last progress sent for the request,
// until the provider reports progress itself. Some hosts reset their
// request timeout on progress. A heartbeat is dropped when the budget
// has no room: it only says the call is alive.
func (c *Call) heartbeat() (stop func()) {
	interval := orDefault(c.srv.ProgressInterval, DefaultProgressInterval)
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
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			msg := fmt.Sprintf("waiting for %s (%ds)", c.waitingFor(), int(time.Since(start).Seconds()))
			c.attached().sendProgress(0, 0, msg, false)
		}
	}()
	return func() { close(done); <-exited }
}

// encodeMessage encodes a tools/call response: the input_required result
// that asks the user first, or the tool's result. A result whose one
// content block is JSON bytes (JSONResult) is written from those bytes,
// and so is the structured content that shares them: the response is a
// message in parts around them, so that a large result is held once, as
// it was read.
func (res *callToolResult) encodeMessage(id jsontext.Value) (Message, error) {
	if res.created != nil {
		return res.created.encode(id, res.resultTail)
	}
	if m, ok, err := res.encodeInput(id, res.resultTail); ok {
		return m, err
	}
	if len(res.Content) != 1 || res.Content[0].JSON == nil {
		b, err := encodeResult(id, res)
		return msgOf(b, nil), err
	}
	text := res.Content[0].JSON
	// The bytes around the shared ones, each made by the encoder:
	// {"jsonrpc":…,"result":{"content":[  …  ]}}
	head, err := encodeResult(id, &struct {
		Content []Content `json:"content"`
	}{})
	if err != nil {
		return Message{}, err
	}
	head = append(head[:len(head)-len("]}}")], `{"type":"text","text":"`...)
	after, err := json.Marshal(&struct {
		IsError bool `json:"isError,omitzero"`
		resultTail
	}{res.IsError, res.resultTail}, encodeOpts)
	if err != nil {
		return Message{}, err
	}
	closing := []byte(`"}]`)
	parts := []part{{b: head}, {b: text, quoted: true, counted: true}}
	if sc := res.StructuredContent; sc != nil {
		closing = append(closing, `,"structuredContent":`...)
		parts = append(parts, part{b: closing}, part{b: sc, counted: res.shared})
		closing = nil
	}
	if len(after) > len("{}") {
		closing = append(closing, ',')
	}
	closing = append(append(closing, after[1:]...), '}') // the members after content, and the message's end
	return Message{parts: append(parts, part{b: closing})}, nil
}
