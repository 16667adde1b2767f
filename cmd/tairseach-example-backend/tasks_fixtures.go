package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The methods that run long, as tasks run them: the fixtures of the conformance suite's tasks
// scenarios (scripts/interop/fixtures/tasks.json). They speak during the
// call, as docs/backend-protocol.md says a backend may: progress first,
// which tells the bridge the work takes a while (a client that can take
// a task gets one at once), and questions to the user.

// progress reports progress, in the units of the work: what tells the
// bridge the work takes a while (a client that can take a task gets one).
func progress(p *peer, value, total int, message string) error {
	return p.notify("notifications/progress", map[string]any{"progress": value, "total": total, "message": message})
}

// asked is a question askAll asks: its id (which names it to the user), a
// method and its params.
type asked struct {
	id, method string
	params     any
}

// askAll asks the questions at once, then waits for their answers, in
// whatever order they come: the results by id, or the first error.
func askAll(ctx context.Context, p *peer, qs ...asked) (map[string]json.RawMessage, error) {
	sent := make([]*question, len(qs))
	for i, q := range qs {
		var err error
		if sent[i], err = p.ask(q.id, q.method, q.params); err != nil {
			return nil, err
		}
	}
	answers := make(map[string]json.RawMessage, len(qs))
	for i, q := range sent {
		res, err := q.wait(ctx)
		if err != nil {
			return nil, err
		}
		answers[qs[i].id] = res
	}
	return answers, nil
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return &rpcError{Code: codeShuttingDown, Message: "interrupted: the backend is shutting down"}
	}
}

// taskMethods are the methods of this file, for the method table.
func (b *backend) taskMethods() map[string]handler {
	return map[string]handler{
		"fixtures.greet":            greet,
		"fixtures.slow_compute":     slowCompute,
		"fixtures.failing_job":      failingJob,
		"fixtures.large_result":     largeResult,
		"fixtures.confirm_delete":   confirmDelete,
		"fixtures.multi_input":      multiInput,
		"fixtures.ask_then_compute": askThenCompute,
	}
}

// greet greets name at once: a call that never needs a task.
func greet(_ context.Context, params json.RawMessage, _ *peer) (any, error) {
	pr, err := bind[struct {
		Name *string `json:"name"`
	}](params)
	if err != nil {
		return nil, err
	}
	name := "World"
	if pr.Name != nil {
		name = *pr.Name
	}
	return "Hello, " + name + "!", nil
}

// slowCompute computes for seconds, reporting progress each second; with
// no seconds it answers at once.
func slowCompute(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	pr, err := bind[struct {
		Seconds *integer `json:"seconds"`
		Label   *string  `json:"label"`
	}](params)
	if err != nil {
		return nil, err
	}
	var seconds integer
	if pr.Seconds != nil {
		seconds = *pr.Seconds
	}
	if seconds < 0 || seconds > maxSleep/1000 {
		return nil, invalidParams("seconds must be between 0 and %d, got %d", maxSleep/1000, seconds)
	}
	label := "it"
	if pr.Label != nil {
		label = *pr.Label
	}
	for i := range int(seconds) {
		if err := progress(p, i+1, int(seconds)+1, fmt.Sprintf("computing %s: %d of %d seconds", label, i, seconds)); err != nil {
			return nil, err
		}
		if err := sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
	return fmt.Sprintf("Computed %s in %d s.", label, seconds), nil
}

// failingJob works a second, then fails: the backend's error.
func failingJob(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	if err := progress(p, 1, 2, "working"); err != nil {
		return nil, err
	}
	if err := sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	return nil, &rpcError{Code: -32099, Message: "the job failed: the source it reads is gone"}
}

// largeResult works half a second, then answers kilobytes bytes (default
// 256) of text: more than a bridge with a small --max-task-bytes keeps.
func largeResult(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	pr, err := bind[struct {
		Kilobytes *integer `json:"kilobytes"`
	}](params)
	if err != nil {
		return nil, err
	}
	kb := integer(256)
	if pr.Kilobytes != nil {
		kb = *pr.Kilobytes
	}
	if kb < 0 || kb > 16<<10 {
		return nil, invalidParams("kilobytes must be between 0 and %d, got %d", 16<<10, kb)
	}
	if err := progress(p, 1, 2, "working"); err != nil {
		return nil, err
	}
	if err := sleep(ctx, 500*time.Millisecond); err != nil {
		return nil, err
	}
	return strings.Repeat("x", int(kb)<<10), nil
}

// yesNo is a form of one boolean, confirm.
func yesNo(message string) map[string]any {
	return map[string]any{"mode": "form", "message": message, "requestedSchema": map[string]any{
		"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean", "title": "Yes"}}, "required": []string{"confirm"}}}
}

// nameQuestion is a form of one string, name.
func nameQuestion(message string) map[string]any {
	return map[string]any{"mode": "form", "message": message, "requestedSchema": map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "title": "Name"}}, "required": []string{"name"}}}
}

// formReply reads an elicitation result: whether it was accepted, and its
// content.
func formReply(raw json.RawMessage) (accepted bool, content map[string]any) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Action == "accept", r.Content
}

// confirmDelete checks the file, then asks the user whether to delete it:
// a question asked once the work has begun.
func confirmDelete(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	pr, err := bind[struct {
		Filename *string `json:"filename"`
	}](params)
	if err != nil {
		return nil, err
	}
	name, err := required(pr.Filename, "filename")
	if err != nil {
		return nil, err
	}
	if err := progress(p, 1, 2, "checking "+name); err != nil {
		return nil, err
	}
	answers, err := askAll(ctx, p, asked{"delete", "elicitation/create", yesNo("Delete " + name + "?")})
	if err != nil {
		return nil, err
	}
	if ok, content := formReply(answers["delete"]); ok && content["confirm"] == true {
		return "Deleted " + name + ".", nil
	}
	return "Kept " + name + ".", nil
}

// multiInput asks two questions at once, once the work has begun, and
// answers with both names.
func multiInput(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	if err := progress(p, 1, 2, "gathering"); err != nil {
		return nil, err
	}
	answers, err := askAll(ctx, p, asked{"first", "elicitation/create", nameQuestion("The first name?")},
		asked{"second", "elicitation/create", nameQuestion("The second name?")})
	if err != nil {
		return nil, err
	}
	_, first := formReply(answers["first"])
	_, second := formReply(answers["second"])
	return fmt.Sprintf("Got %v and %v.", first["name"], second["name"]), nil
}

// askThenCompute asks the user's name before it works (so that its
// question is answered before any task exists), then computes two
// seconds, and greets the name.
func askThenCompute(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	answers, err := askAll(ctx, p, asked{"user_name", "elicitation/create", nameQuestion("Your name?")})
	if err != nil {
		return nil, err
	}
	_, content := formReply(answers["user_name"])
	name, _ := content["name"].(string)
	if err := progress(p, 1, 2, "computing for "+name); err != nil {
		return nil, err
	}
	if err := sleep(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	return "Hello, " + name + "!", nil
}
