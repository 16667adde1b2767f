package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// The methods that run long, as tasks run them: notes.import for the demo
// and the examples, and the fixtures of the conformance suite's tasks
// scenarios (scripts/interop/fixtures/tasks.json). They speak during the
// call, as docs/backend-protocol.md says a backend may: progress first,
// which tells the bridge the work takes a while (a client that can take
// a task gets one at once), and questions to the user.

// peer is the bridge at the other end of the connection of a request, for
// a handler that speaks during the call: it writes notifications and
// requests on the connection, and reads the answers, before its reply.
// The connection carries one request at a time, so whatever the handler
// writes or reads meanwhile is its own. A peer is used by the handler's
// goroutine alone.
type peer struct {
	conn net.Conn
	sc   *bufio.Scanner // the connection's reader, idle while the handler runs
}

type peerKey struct{}

// withPeer returns ctx carrying the peer of the request its handler
// answers. (The handlers' signature is the method table's, which most
// methods need: only the few that speak look the peer up.)
func withPeer(ctx context.Context, p *peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

// peerOf returns the peer of ctx's request, or nil for a call made
// without a connection (a test's).
func peerOf(ctx context.Context) *peer {
	p, _ := ctx.Value(peerKey{}).(*peer)
	return p
}

// errGone is what speaking gets once the bridge hung up: the call was
// cancelled, or the bridge went away.
var errGone = errors.New("the bridge hung up")

// notify sends a notification, such as notifications/progress; nil
// peers send nothing.
func (p *peer) notify(method string, params any) error {
	if p == nil {
		return nil
	}
	return p.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// progress reports progress, in the units of the work.
func (p *peer) progress(value, total int, message string) error {
	return p.notify("notifications/progress", map[string]any{"progress": value, "total": total, "message": message})
}

func (p *peer) write(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := p.conn.Write(append(b, '\n')); err != nil {
		return errGone
	}
	return nil
}

// question is a request of the handler's to the bridge: an id (which
// names the question to the user), a method and its params.
type question struct {
	id, method string
	params     any
}

// ask sends the questions at once, then reads their answers, in whatever
// order they come: the results by id, or the first error the bridge
// answered.
func (p *peer) ask(qs ...question) (map[string]json.RawMessage, error) {
	if p == nil {
		return nil, errors.New("this call cannot ask: it has no connection")
	}
	for _, q := range qs {
		if err := p.write(map[string]any{"jsonrpc": "2.0", "id": q.id, "method": q.method, "params": q.params}); err != nil {
			return nil, err
		}
	}
	answers := map[string]json.RawMessage{}
	for len(answers) < len(qs) {
		if !p.sc.Scan() {
			return nil, errGone
		}
		var resp struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if json.Unmarshal(p.sc.Bytes(), &resp) != nil {
			continue // not an answer: nothing else comes during the call
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		answers[resp.ID] = resp.Result
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
		"notes.import":              b.notes.importNotes,
		"fixtures.greet":            greet,
		"fixtures.slow_compute":     slowCompute,
		"fixtures.failing_job":      failingJob,
		"fixtures.large_result":     largeResult,
		"fixtures.confirm_delete":   confirmDelete,
		"fixtures.multi_input":      multiInput,
		"fixtures.ask_then_compute": askThenCompute,
	}
}

// Bounds of notes.import.
const (
	maxImport      = 1000
	maxImportDelay = 10_000
)

// importNotes imports count notes ("imported note 1", …), waiting
// delay_ms before each as a slow source would, and reports its progress
// after each; it stops when the bridge hangs up (the call cancelled).
func (s *noteStore) importNotes(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := bind[struct {
		Count   *integer `json:"count"`
		DelayMS *integer `json:"delay_ms"`
	}](params)
	if err != nil {
		return nil, err
	}
	count, delay := integer(5), integer(500)
	if p.Count != nil {
		count = *p.Count
	}
	if p.DelayMS != nil {
		delay = *p.DelayMS
	}
	switch {
	case count < 1 || count > maxImport:
		return nil, invalidParams("count must be between 1 and %d, got %d", maxImport, count)
	case delay < 0 || delay > maxImportDelay:
		return nil, invalidParams("delay_ms must be between 0 and %d, got %d", maxImportDelay, delay)
	}
	peer := peerOf(ctx)
	if err := peer.progress(0+1, int(count)+1, fmt.Sprintf("importing %d notes", count)); err != nil {
		return nil, err
	}
	var ids []string
	for i := 1; i <= int(count); i++ {
		if err := sleep(ctx, time.Duration(delay)*time.Millisecond); err != nil {
			return nil, err
		}
		title := fmt.Sprintf("imported note %d", i)
		n, err := s.create(ctx, json.RawMessage(fmt.Sprintf(`{"title":%q}`, title)))
		if err != nil {
			return nil, err
		}
		ids = append(ids, n.(note).ID)
		if err := peer.progress(i+1, int(count)+1, fmt.Sprintf("%d of %d notes", i, count)); err != nil {
			return nil, fmt.Errorf("stopped after %d notes: %w", i, err)
		}
	}
	return map[string]any{"imported": len(ids), "ids": ids}, nil
}

// greet greets name at once: a call that never needs a task.
func greet(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := bind[struct {
		Name *string `json:"name"`
	}](params)
	if err != nil {
		return nil, err
	}
	name := "World"
	if p.Name != nil {
		name = *p.Name
	}
	return "Hello, " + name + "!", nil
}

// slowCompute computes for seconds, reporting progress each second; with
// no seconds it answers at once.
func slowCompute(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := bind[struct {
		Seconds *integer `json:"seconds"`
		Label   *string  `json:"label"`
	}](params)
	if err != nil {
		return nil, err
	}
	var seconds integer
	if p.Seconds != nil {
		seconds = *p.Seconds
	}
	if seconds < 0 || seconds > maxSleep/1000 {
		return nil, invalidParams("seconds must be between 0 and %d, got %d", maxSleep/1000, seconds)
	}
	label := "it"
	if p.Label != nil {
		label = *p.Label
	}
	peer := peerOf(ctx)
	for i := range int(seconds) {
		if err := peer.progress(i+1, int(seconds)+1, fmt.Sprintf("computing %s: %d of %d seconds", label, i, seconds)); err != nil {
			return nil, err
		}
		if err := sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
	return fmt.Sprintf("Computed %s in %d s.", label, seconds), nil
}

// failingJob works a second, then fails: the backend's error.
func failingJob(ctx context.Context, params json.RawMessage) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	if err := peerOf(ctx).progress(1, 2, "working"); err != nil {
		return nil, err
	}
	if err := sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	return nil, &rpcError{Code: -32099, Message: "the job failed: the source it reads is gone"}
}

// largeResult works half a second, then answers kilobytes bytes (default
// 256) of text: more than a bridge with a small --max-task-bytes keeps.
func largeResult(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := bind[struct {
		Kilobytes *integer `json:"kilobytes"`
	}](params)
	if err != nil {
		return nil, err
	}
	kb := integer(256)
	if p.Kilobytes != nil {
		kb = *p.Kilobytes
	}
	if kb < 0 || kb > 16<<10 {
		return nil, invalidParams("kilobytes must be between 0 and %d, got %d", 16<<10, kb)
	}
	if err := peerOf(ctx).progress(1, 2, "working"); err != nil {
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

// nameForm is a form of one string, name.
func nameForm(message string) map[string]any {
	return map[string]any{"mode": "form", "message": message, "requestedSchema": map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "title": "Name"}}, "required": []string{"name"}}}
}

// form reads an elicitation result: whether it was accepted, and its
// content.
func form(raw json.RawMessage) (accepted bool, content map[string]any) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Action == "accept", r.Content
}

// confirmDelete checks the file, then asks the user whether to delete it:
// a question asked once the work has begun.
func confirmDelete(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := bind[struct {
		Filename *string `json:"filename"`
	}](params)
	if err != nil {
		return nil, err
	}
	name, err := required(p.Filename, "filename")
	if err != nil {
		return nil, err
	}
	peer := peerOf(ctx)
	if err := peer.progress(1, 2, "checking "+name); err != nil {
		return nil, err
	}
	answers, err := peer.ask(question{"delete", "elicitation/create", yesNo("Delete " + name + "?")})
	if err != nil {
		return nil, err
	}
	if ok, content := form(answers["delete"]); ok && content["confirm"] == true {
		return "Deleted " + name + ".", nil
	}
	return "Kept " + name + ".", nil
}

// multiInput asks two questions at once, once the work has begun, and
// answers with both names.
func multiInput(ctx context.Context, params json.RawMessage) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	peer := peerOf(ctx)
	if err := peer.progress(1, 2, "gathering"); err != nil {
		return nil, err
	}
	answers, err := peer.ask(question{"first", "elicitation/create", nameForm("The first name?")},
		question{"second", "elicitation/create", nameForm("The second name?")})
	if err != nil {
		return nil, err
	}
	_, first := form(answers["first"])
	_, second := form(answers["second"])
	return fmt.Sprintf("Got %v and %v.", first["name"], second["name"]), nil
}

// askThenCompute asks the user's name before it works (so that its
// question is answered before any task exists), then computes two
// seconds, and greets the name.
func askThenCompute(ctx context.Context, params json.RawMessage) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	peer := peerOf(ctx)
	answers, err := peer.ask(question{"user_name", "elicitation/create", nameForm("Your name?")})
	if err != nil {
		return nil, err
	}
	_, content := form(answers["user_name"])
	name, _ := content["name"].(string)
	if err := peer.progress(1, 2, "computing for "+name); err != nil {
		return nil, err
	}
	if err := sleep(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	return "Hello, " + name + "!", nil
}
