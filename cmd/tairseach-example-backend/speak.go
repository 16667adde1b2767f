package main

// The methods that speak to the client while they work, as
// docs/backend-protocol.md says a backend may: notes.import reports its
// progress and a log message, notes.digest asks the client's model,
// notes.label asks the user to fill in a form, files.roots asks the client
// for its roots. Each question goes on the request's connection (see
// peer), named by a string id; a client that cannot be asked gets an
// error saying so, never a wait.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// What the methods ask their client for, as their errors say it.
var (
	toSummarize = need{method: "sampling/createMessage", doing: "summarize", what: "sampling", capability: "sampling"}
	toLabel     = need{method: "elicitation/create", doing: "ask its user for a label", what: "forms", capability: "elicitation"}
	toListRoots = need{method: "roots/list", doing: "list its roots", what: "roots", capability: "roots"}
)

// Limits of notes.import, also stated in manifests-example/notes.json.
const (
	maxImport      = 100
	maxImportDelay = 10_000
	importTitle    = "Imported note"
)

// importResult is the result of notes.import.
type importResult struct {
	Imported int      `json:"imported"`
	IDs      []string `json:"ids"`
}

// importNotes creates count notes, delay_ms apart, reporting progress
// after each (notifications/progress) and a log message at the end
// (notifications/message). A client that hangs up stops it: the notes
// made so far stay.
func (s *noteStore) importNotes(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	pr, err := bind[struct {
		Count   *integer `json:"count"`
		DelayMS *integer `json:"delay_ms"`
		Title   *string  `json:"title"`
	}](params)
	if err != nil {
		return nil, err
	}
	count, err := required(pr.Count, "count")
	if err != nil {
		return nil, err
	}
	if count < 1 || count > maxImport {
		return nil, invalidParams("count must be between 1 and %d, got %d", maxImport, count)
	}
	var delay integer
	if pr.DelayMS != nil {
		delay = *pr.DelayMS
	}
	if delay < 0 || delay > maxImportDelay {
		return nil, invalidParams("delay_ms must be between 0 and %d, got %d", maxImportDelay, delay)
	}
	title := importTitle
	if pr.Title != nil {
		title = strings.TrimSpace(*pr.Title)
	}
	// Room for " 100 of 100".
	if title == "" || len(title) > maxTitleLen-12 {
		return nil, invalidParams("title must be 1 to %d bytes, got %d", maxTitleLen-12, len(title))
	}

	n := int(count)
	out := importResult{IDs: []string{}}
	for i := 1; i <= n; i++ {
		if i > 1 && delay > 0 {
			t := time.NewTimer(time.Duration(delay) * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, &rpcError{Code: codeShuttingDown, Message: "interrupted: the backend is shutting down", Data: out}
			}
		}
		created, err := s.add(fmt.Sprintf("%s %d of %d", title, i, n), fmt.Sprintf("Note %d of %d, made by notes.import.", i, n))
		if err != nil {
			return nil, err
		}
		out.Imported++
		out.IDs = append(out.IDs, created.ID)
		progress := map[string]any{"progress": i, "total": n, "message": fmt.Sprintf("%d of %d notes", i, n)}
		if err := p.notify("notifications/progress", progress); err != nil {
			return nil, &rpcError{Code: codeCancelled, Message: fmt.Sprintf("cancelled: the client hung up after %d of %d notes", i, n), Data: out}
		}
	}
	p.notify("notifications/message", map[string]any{"level": "info", "logger": "notes", "data": fmt.Sprintf("imported %d notes", n)})
	return out, nil
}

// Bounds of what notes.digest sends the client's model.
const (
	maxDigestNotes     = 20
	maxDigestBodyBytes = 2000
	digestMaxTokens    = 300
)

// digest asks the client's model to summarize the notes about a topic
// (those whose title, body or label contains it, ignoring case; the
// newest maxDigestNotes), and returns {"digest": <the model's text>}.
func (s *noteStore) digest(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	pr, err := bind[struct {
		Topic *string `json:"topic"`
	}](params)
	if err != nil {
		return nil, err
	}
	topic, err := required(pr.Topic, "topic")
	if err != nil {
		return nil, err
	}
	if topic = strings.TrimSpace(topic); topic == "" {
		return nil, invalidParams("topic must not be empty")
	}
	s.mu.RLock()
	all, err := s.newestFirst()
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Summarize these notes about %q in a few sentences, for the person who wrote them.\n", topic)
	found := 0
	lower := strings.ToLower(topic)
	for _, n := range all {
		if !strings.Contains(strings.ToLower(n.Title+"\n"+n.Body+"\n"+n.Label), lower) {
			continue
		}
		if found++; found > maxDigestNotes {
			break
		}
		fmt.Fprintf(&b, "\n## %s\n%s\n", n.Title, cut(n.Body, maxDigestBodyBytes))
	}
	if found == 0 {
		return nil, &rpcError{Code: codeNotFound, Message: fmt.Sprintf("no notes about %q to summarize; notes.list shows the notes there are", topic)}
	}
	raw, err := p.call(ctx, "digest", toSummarize.method, map[string]any{
		"messages":     []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": b.String()}}},
		"systemPrompt": "You summarize a person's notes briefly and plainly.",
		"maxTokens":    digestMaxTokens,
	})
	if err != nil {
		return nil, toSummarize.failed(ctx, err)
	}
	text, err := sampledText(raw)
	if err != nil {
		return nil, err
	}
	return map[string]string{"digest": text}, nil
}

// sampledText returns the text of a sampling/createMessage result: its
// text content, or its text blocks one after the other.
func sampledText(raw json.RawMessage) (string, error) {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 {
		return "", &rpcError{Code: codeInternalError, Message: "the client's model answered something that is not a sampling result"}
	}
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var blocks []block
	if r.Content[0] == '[' {
		json.Unmarshal(r.Content, &blocks)
	} else {
		var one block
		json.Unmarshal(r.Content, &one)
		blocks = []block{one}
	}
	var texts []string
	for _, c := range blocks {
		if c.Type == "text" && strings.TrimSpace(c.Text) != "" {
			texts = append(texts, c.Text)
		}
	}
	if len(texts) == 0 {
		return "", &rpcError{Code: codeInternalError, Message: "the client's model answered without text"}
	}
	return strings.Join(texts, "\n"), nil
}

// cut returns s shortened to at most n bytes, at a rune boundary, with
// "…" when it was shortened.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// maxLabelLen bounds a label, also stated in manifests-example/notes.json.
const maxLabelLen = 50

// labelResult is the result of notes.label.
type labelResult struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Label is the note's label now: the user's, or the one it had.
	Label string `json:"label,omitempty"`
	// Answer is the user's: accept, decline or cancel.
	Answer  string `json:"answer"`
	Changed bool   `json:"changed"`
}

// label asks the user, with a form, for a label for the note id, and
// stores it. A user who declines or dismisses the form leaves the note
// unchanged.
func (s *noteStore) label(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	id, err := noteIDParam(params)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	n, err := s.read(id)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	field := map[string]any{
		"type": "string", "title": "Label", "minLength": 1, "maxLength": maxLabelLen,
		"description": "A word or two to file the note under, such as shopping or work.",
	}
	if n.Label != "" {
		field["default"] = n.Label
	}
	raw, err := p.call(ctx, "label", toLabel.method, map[string]any{
		"message": fmt.Sprintf("A label for the note “%s”?", n.Title),
		"requestedSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"label": field},
			"required":   []string{"label"},
		},
	})
	if err != nil {
		return nil, toLabel.failed(ctx, err)
	}
	var answer struct {
		Action  string `json:"action"`
		Content struct {
			Label *string `json:"label"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, &rpcError{Code: codeInternalError, Message: "the client's answer is not an elicitation result"}
	}
	switch answer.Action {
	case "decline", "cancel":
		return labelResult{ID: n.ID, Title: n.Title, Label: n.Label, Answer: answer.Action}, nil
	case "accept":
	default:
		return nil, &rpcError{Code: codeInternalError, Message: fmt.Sprintf("the client's answer has the action %q, not accept, decline or cancel", answer.Action)}
	}
	var label string
	if answer.Content.Label != nil {
		label = strings.TrimSpace(*answer.Content.Label)
	}
	if label == "" || utf8.RuneCountInString(label) > maxLabelLen {
		return nil, invalidParams("the user's label must be 1 to %d characters, got %q; the note is unchanged", maxLabelLen, label)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	// The user took their time: the note may have changed, or gone.
	if n, err = s.read(id); err != nil {
		return nil, err
	}
	n.Label = label
	if err := s.write(n); err != nil {
		return nil, err
	}
	return labelResult{ID: n.ID, Title: n.Title, Label: label, Answer: "accept", Changed: true}, nil
}

// listRoots asks the client for its roots (roots/list) and returns them
// as the client gave them.
func listRoots(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	raw, err := p.call(ctx, "roots", toListRoots.method, map[string]any{})
	if err != nil {
		return nil, toListRoots.failed(ctx, err)
	}
	var r struct {
		Roots []json.RawMessage `json:"roots"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Roots == nil {
		return nil, &rpcError{Code: codeInternalError, Message: "the client's answer is not a list of roots"}
	}
	return map[string]any{"roots": r.Roots}, nil
}
