package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry"
)

// callAsTask runs the tool name as a task, through exactly the path a
// client's 2025-11-25 tools/call with params.task takes: a session of an
// in-process server, whose requests the command sends as a client would.
// It shows the task's status on stderr as it changes (its statusMessage
// is the backend's latest progress), answers the questions the call asks
// on the terminal (ask), cancels the task when ctx ends (Ctrl-C), and
// returns the call's result once the task has ended.
func callAsTask(ctx context.Context, e *env, opts *options, log *zerolog.Logger, reg *registry.Registry, name string, arguments []byte, ask protocol.Asker) (*protocol.CallToolResult, error) {
	srv := &protocol.Server{
		Info:             serverInfo(),
		Tools:            toolProvider(opts, reg),
		Logger:           log,
		ProgressInterval: -1,
		AskTimeout:       opts.askTimeout,
		MaxTaskTTL:       opts.tasks.maxTTL,
		TaskRecorded:     reg.RecordTask,
	}
	c := &taskCaller{ask: ask, e: e}
	c.ss = srv.NewSession(c.sink(nil), protocol.SessionOptions{Transport: "cli", Principal: protocol.Principal{Kind: protocol.PrincipalProcess}})
	defer c.ss.Close()
	if _, err := c.request(context.WithoutCancel(ctx), "initialize", map[string]any{
		"protocolVersion": protocol.Version20251125,
		"capabilities":    map[string]any{"tasks": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}}},
		"clientInfo":      protocol.ClientInfo{Name: "tairseach-mcp call", Version: version()},
	}); err != nil {
		return nil, err
	}
	created, err := c.request(ctx, "tools/call", map[string]any{"name": name, "arguments": jsontext.Value(arguments), "task": map[string]any{}})
	if err != nil {
		return nil, err
	}
	var cr struct {
		Task taskStatus `json:"task"`
	}
	if err := json.Unmarshal(created, &cr, json.RejectUnknownMembers(false)); err != nil || cr.Task.TaskID == "" {
		return nil, fmt.Errorf("the call did not become a task: %s", created)
	}
	id := cr.Task.TaskID
	fmt.Fprintf(e.stderr, "task %s: %s\n", id, cr.Task)
	last := cr.Task.String()
	poll := time.NewTicker(time.Duration(max(cr.Task.PollInterval, 100)) * time.Millisecond)
	defer poll.Stop()
	for !cr.Task.ended() {
		select {
		case <-ctx.Done():
			// Ctrl-C: the task is cancelled, as a client that gives up would.
			_, err := c.request(context.WithoutCancel(ctx), "tasks/cancel", map[string]string{"taskId": id})
			fmt.Fprintf(e.stderr, "task %s: cancelled\n", id)
			return nil, errors.Join(ctx.Err(), err)
		case <-poll.C:
		}
		got, err := c.request(ctx, "tasks/get", map[string]string{"taskId": id})
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(got, &cr.Task, json.RejectUnknownMembers(false)); err != nil {
			return nil, fmt.Errorf("tasks/get: %w", err)
		}
		if s := cr.Task.String(); s != last {
			fmt.Fprintf(e.stderr, "task %s: %s\n", id, s)
			last = s
		}
	}
	raw, err := c.request(context.WithoutCancel(ctx), "tasks/result", map[string]string{"taskId": id})
	if err != nil {
		return nil, err
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent jsontext.Value `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res, json.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("tasks/result: %w", err)
	}
	out := &protocol.CallToolResult{StructuredContent: res.StructuredContent, IsError: res.IsError}
	for _, b := range res.Content {
		out.Content = append(out.Content, protocol.Content{Type: b.Type, Text: b.Text})
	}
	return out, nil
}

// taskStatus is a 2025-11-25 Task, as the command shows it.
type taskStatus struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	PollInterval  int64  `json:"pollInterval"`
}

func (t taskStatus) String() string {
	if t.StatusMessage == "" {
		return t.Status
	}
	return t.Status + " (" + safetext.Line(t.StatusMessage) + ")"
}

func (t taskStatus) ended() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// taskCaller is the command's side of the session: it sends requests
// and answers the server's.
type taskCaller struct {
	ss  *protocol.Session
	ask protocol.Asker
	e   *env
	ids atomic.Int64
}

// request sends method with params and returns the result, or the
// JSON-RPC error as an error (a *protocol.Error).
func (c *taskCaller) request(ctx context.Context, method string, params any) (jsontext.Value, error) {
	id := c.ids.Add(1)
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	answered := make(chan jsontext.Value, 1)
	if err := c.ss.Handle(ctx, msg, c.sink(answered)); err != nil {
		return nil, err
	}
	var resp jsontext.Value
	select {
	case resp = <-answered:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var r struct {
		Result jsontext.Value  `json:"result"`
		Error  *protocol.Error `json:"error"`
	}
	if err := json.Unmarshal(resp, &r, json.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
}

// sink returns the Sink of a request whose response goes to answered
// (nil: the session's own stream). The server's questions (its requests)
// are answered on the terminal, on a goroutine of their own each (Send
// must not block), which ends with the answer.
func (c *taskCaller) sink(answered chan jsontext.Value) protocol.Sink {
	return sinkFunc(func(m protocol.Message) {
		b := append(jsontext.Value(nil), m.Bytes()...)
		final := m.Final()
		m.Release()
		var msg struct {
			ID     jsontext.Value `json:"id"`
			Method string         `json:"method"`
			Params struct {
				Message         string         `json:"message"`
				RequestedSchema jsontext.Value `json:"requestedSchema"`
			} `json:"params"`
		}
		switch {
		case final && answered != nil:
			answered <- b
		case json.Unmarshal(b, &msg, json.RejectUnknownMembers(false)) == nil && msg.ID != nil && msg.Method != "":
			go c.answer(msg.ID, msg.Method, msg.Params.Message, msg.Params.RequestedSchema)
		}
	})
}

// answer answers the server's request id: a confirmation is asked on the
// terminal; any other question is declined, with a word on stderr.
func (c *taskCaller) answer(id jsontext.Value, method, message string, schema jsontext.Value) {
	result := map[string]any{"action": "decline"}
	var form struct {
		Properties map[string]jsontext.Value `json:"properties"`
	}
	_ = json.Unmarshal(schema, &form, json.RejectUnknownMembers(false))
	if _, yesNo := form.Properties["confirm"]; method == "elicitation/create" && yesNo && len(form.Properties) == 1 {
		if a, err := c.ask(context.Background(), protocol.Question{Message: message}); err == nil && a.Allowed {
			result = map[string]any{"action": "accept", "content": map[string]bool{"confirm": true}}
		}
	} else {
		fmt.Fprintf(c.e.stderr, "the tool asks %s, which call cannot answer here: declined\n", strconv.Quote(method))
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err == nil {
		_ = c.ss.Handle(context.Background(), msg, sinkFunc(func(m protocol.Message) { m.Release() }))
	}
}

// sinkFunc is a Sink that is a function.
type sinkFunc func(protocol.Message)

func (f sinkFunc) Send(m protocol.Message) { f(m) }
