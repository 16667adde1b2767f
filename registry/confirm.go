package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// ConfirmMode is which tools ask the user before they run.
type ConfirmMode int

// The modes. ConfirmDestructive is the zero value.
const (
	// ConfirmDestructive asks before tools annotated destructiveHint:
	// true, unless their manifest sets confirm: false, and before tools
	// whose manifest sets confirm.
	ConfirmDestructive ConfirmMode = iota
	// ConfirmAll asks before every tool.
	ConfirmAll
	// ConfirmNever asks before none.
	ConfirmNever
)

// Confirm says which tools ask the user, through the client, before the
// backend is called. The zero value asks before destructive tools, and
// lets a client that cannot ask run them (logged once per tool).
type Confirm struct {
	Mode ConfirmMode
	// Tools are patterns, with Filter's syntax, of more tools that ask,
	// whatever the mode but ConfirmNever.
	Tools []string
	// DenyUnasked refuses a call that would ask, when the client cannot
	// ask, instead of running it.
	DenyUnasked bool
}

// Check returns an error naming the first malformed pattern.
func (c Confirm) Check() error { return Filter{Include: c.Tools}.Check() }

// ConfirmReason says why a tool asks first.
type ConfirmReason struct {
	// By is "annotation" (destructiveHint: true), "manifest" (its
	// confirm), "pattern" (Pattern matched its name), or "all".
	By      string `json:"by"`
	Pattern string `json:"pattern,omitzero"`
}

// reason returns why t, named client, asks first, or nil when it does not.
func (c Confirm) reason(client string, t *manifest.Tool) *ConfirmReason {
	switch {
	case c.Mode == ConfirmNever:
		return nil
	case c.Mode == ConfirmAll:
		return &ConfirmReason{By: "all"}
	case t.Confirm != nil && t.Confirm.Ask:
		return &ConfirmReason{By: "manifest"}
	}
	if p, ok := matchAny(c.Tools, client, t.Name); ok {
		return &ConfirmReason{By: "pattern", Pattern: p}
	}
	if t.Confirm == nil && t.Annotations != nil && t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint {
		return &ConfirmReason{By: "annotation"}
	}
	return nil
}

// asked is what a call's record says of asking the user.
type asked struct {
	how    string // "elicitation", "input_required", "console" (the owner answered for a client that cannot ask), or "" when not asked
	answer string // "accept" (yes), "no", "decline", "cancel", or "none" (no answer: none in time, the call cancelled, or asking failed)
}

// confirm asks the user before e runs, when it must: it returns nil when
// the call may go on, else the result to answer with. deny refuses the
// call when its client cannot ask; else a call that asks the owner
// instead (protocol.Owner) asks the owner on the console. ErrInputRequired (protocol 2026-07-28,
// the question travels in the result) comes back as err, for CallTool to
// return at once.
func (r *Registry) confirm(ctx context.Context, call *protocol.Call, deny bool, e *Entry, args jsontext.Value) (res *protocol.CallToolResult, outcome string, a asked, err error) {
	if e.Confirm == nil {
		return nil, "", a, nil
	}
	switch {
	case call.CanConfirm():
		a.how = "elicitation"
		if isModern(call.ProtocolVersion()) {
			a.how = "input_required"
		}
	case deny:
		return protocol.TextResult(fmt.Sprintf("%s asks the user before it runs, and this client cannot ask (it declared no elicitation), so the call was refused; nothing was sent to the backend. "+
			"Use a client that supports elicitation, or let the bridge run such calls unconfirmed (--confirm-unsupported allow, or TAIRSEACH_CONFIRM_UNSUPPORTED=allow).", e.Name), true), outcomeRefused, a, nil
	case call.AsksOwner():
		a.how = "console" // the owner answers for the client, on the console
	default:
		r.unaskedOnce(e)
		return nil, "", a, nil
	}
	answer, err := call.Confirm(ctx, r.question(e, args))
	var coded *protocol.Error
	switch {
	case errors.Is(err, protocol.ErrInputRequired):
		return nil, outcomeAsked, a, err
	case errors.Is(err, protocol.ErrOwnerAway):
		a.answer = "none"
		return protocol.TextResult(fmt.Sprintf("%s asks the user before it runs, and this client cannot ask (it declared no elicitation); %s. So the call was refused; nothing was sent to the backend. "+
			"Call it again once the owner has the console open.", e.Name, protocol.WireError(err).Message), true), outcomeRefused, a, nil
	case ctx.Err() != nil || errors.As(err, &coded) && coded.Code == protocol.CodeRequestCancelled:
		a.answer = "none"
		return protocol.TextResult("The call was cancelled while the user was asked.", true), outcomeCancelled, a, nil
	case errors.As(err, &coded) && coded.Code == protocol.CodeRequestTimeout:
		a.answer = "none"
		return protocol.TextResult(fmt.Sprintf("The user did not answer in time whether %s may run, so nothing was done (%s). Do not call it again unless the user asks you to.",
			e.Name, coded.Message), true), outcomeDeclined, a, nil
	case err != nil:
		a.answer = "none"
		r.log.Warn().Err(err).Str("tool", e.Name).Msg("could not ask the user")
		return protocol.TextResult(fmt.Sprintf("The user could not be asked whether %s may run (%v), so nothing was done.", e.Name, err), true), outcomeDeclined, a, nil
	case !answer.Allowed:
		a.answer = answer.Action
		if answer.Action == "accept" {
			a.answer = "no" // the form was sent, with no
		}
		return protocol.TextResult(fmt.Sprintf("The user did not allow %s (%s), so nothing was done. Do not call it again unless the user asks you to.",
			e.Name, map[string]string{"no": "answered no", "decline": "declined", "cancel": "dismissed the question"}[a.answer]), true), outcomeDeclined, a, nil
	}
	a.answer = "accept"
	return nil, "", a, nil
}

// isModern reports whether a version is of the stateless era.
func isModern(version string) bool { return slices.Contains(protocol.ModernVersions, version) }

// unaskedOnce logs, once per tool, that a tool that asks first runs
// unconfirmed because its client cannot ask.
func (r *Registry) unaskedOnce(e *Entry) {
	if _, logged := r.unasked.LoadOrStore(e.Tool.Name, true); !logged {
		r.log.Warn().Str("tool", e.Name).Msg("tool runs unconfirmed: the client cannot ask the user (no elicitation)")
	}
}

// Bounds of a question's text.
const (
	maxShownName  = 60   // bytes of one argument's name
	maxShownValue = 200  // bytes of one value
	maxShownArgs  = 6    // arguments summed up without a template
	maxQuestion   = 2000 // bytes of the whole question, before the mark of a cut
)

// question is what the user is asked before e runs with args: the
// manifest's template, with its placeholders filled from the arguments,
// or the tool's name, title and a summary of the arguments. The question
// keeps its lines; each name and value is shortened and shown on one line
// (safetext.Line), and secrets (by name or schema) are masked: the
// question is shown on a screen.
func (r *Registry) question(e *Entry, args jsontext.Value) protocol.Question {
	shown := shownArgs(e.Tool.InputSchema, args)
	var msg string
	if t := e.Tool.Confirm; t != nil && t.Template != "" {
		msg = manifest.FillTemplate(t.Template, func(name string) string {
			if v, ok := shown.values[name]; ok {
				return v
			}
			return "(not given)"
		})
	} else {
		title := e.Tool.Title
		if title == "" && e.Tool.Annotations != nil {
			title = e.Tool.Annotations.Title
		}
		if title == "" {
			title = e.Tool.Name
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Allow %s (%s) to run?", title, e.Name)
		for i, name := range shown.order {
			if i == maxShownArgs {
				fmt.Fprintf(&b, "\n… and %d more", len(shown.order)-i)
				break
			}
			fmt.Fprintf(&b, "\n%s: %s", safetext.Line(safetext.Cut(name, maxShownName)), shown.values[name])
		}
		msg = b.String()
	}
	return protocol.Question{Message: safetext.Cut(safetext.Text(msg), maxQuestion)}
}

// shown are the top-level arguments as a question shows them.
type shown struct {
	order  []string
	values map[string]string
}

// shownArgs renders each top-level argument for a person: strings as
// they are, anything else as JSON, each cut to maxShownValue bytes and
// shown on one line; secrets masked.
func shownArgs(schema, args jsontext.Value) shown {
	s := shown{values: map[string]string{}}
	redacted, _ := audit.Values(schema, args) // secrets masked, strings cut; nil when too large
	var members []struct {
		name string
		v    jsontext.Value
	}
	dec := jsontext.NewDecoder(bytes.NewReader(redacted))
	if tok, err := dec.ReadToken(); err == nil && tok.Kind() == '{' {
		for dec.PeekKind() == '"' {
			tok, err := dec.ReadToken()
			if err != nil {
				break
			}
			name := tok.String() // before the next read voids tok
			v, err := dec.ReadValue()
			if err != nil {
				break
			}
			members = append(members, struct {
				name string
				v    jsontext.Value
			}{name, v.Clone()})
		}
	}
	if redacted == nil { // too large to read: the names, at least
		for _, k := range audit.Keys(args) {
			s.order, s.values[k] = append(s.order, k), "(too large to show)"
		}
		return s
	}
	for _, m := range members {
		var text string
		if m.v.Kind() == '"' {
			_ = json.Unmarshal(m.v, &text)
			if text == audit.Redacted {
				text = "••••••"
			}
		} else {
			text = string(m.v)
		}
		s.order, s.values[m.name] = append(s.order, m.name), safetext.Line(safetext.Cut(text, maxShownValue))
	}
	return s
}
