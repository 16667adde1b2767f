package registry

import (
	"errors"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// Recorder keeps the record of the calls: audit.Writer is one. Record
// must not block; the entry is the Recorder's afterwards.
type Recorder interface {
	Record(*audit.Entry)
}

// called is what the record of a call says of it, beside its request.
type called struct {
	entry      *Entry                   // the tool called; nil when the name is not served
	args       jsontext.Value           // the arguments, {} for none
	res        *protocol.CallToolResult // nil when the call was refused as unknown
	outcome    string
	backendErr error  // the backend's error, when it returned one
	asked      asked  // what the user was asked, when they were
	refusal    string // why an answer to a confirmation was refused unread
	err        error  // protocol.ErrInputRequired: the question went out in the result

	found []string // the tools find_tools returned, by client name
}

// record adds one entry to the audit log, when there is one: who called
// what, when, how long it took and how it went; the names of the
// arguments, and their values only with AuditValues (secrets redacted).
func (r *Registry) record(call *protocol.Call, req *protocol.CallToolRequest, start time.Time, c called) {
	if r.opts.Audit == nil && r.opts.Observe == nil {
		return
	}
	ae := entryOf(call, start, audit.KindTool, req.Name)
	ae.Outcome, ae.BytesIn, ae.BytesOut, ae.ArgKeys = c.outcome, len(req.Arguments), contentSize(c.res), audit.Keys(c.args)
	ae.Confirmation, ae.Answer, ae.Refusal = c.asked.how, c.asked.answer, c.refusal
	ae.Found, ae.Task = c.found, call.TaskID()
	var schema jsontext.Value
	if c.entry != nil {
		ae.ManifestName, ae.Method, schema = c.entry.Tool.Name, c.entry.Method, c.entry.Tool.InputSchema
	}
	ae.Code = backendCode(c.backendErr)
	if r.opts.AuditValues {
		ae.Args, ae.ArgsCut = audit.Values(schema, c.args)
	}
	if f := r.onRecord.Load(); f != nil {
		(*f)(ae) // before the Recorder owns the entry
	}
	r.recordEntry(call, ae)
}

// recordEntry tells the observer of the call's end, and hands the
// entry to the audit log; either may be absent.
func (r *Registry) recordEntry(call *protocol.Call, ae *audit.Entry) {
	if o := r.opts.Observe; o != nil {
		own := *ae // the Recorder makes the entry's text safe in place
		own.ArgKeys, own.Found = slices.Clone(ae.ArgKeys), slices.Clone(ae.Found)
		own.Clean()
		o.CallEnded(call, &own)
	}
	if r.opts.Audit != nil {
		r.opts.Audit.Record(ae)
	}
}

// started tells the observer, when there is one, that call asks for kind
// (audit.KindTool, …) name.
func (r *Registry) started(call *protocol.Call, kind, name string, at time.Time) {
	if o := r.opts.Observe; o != nil {
		o.CallStarted(call, kind, name, at)
	}
}

// RecordRefusal adds one entry to the audit log, when there is one, for a
// tools/call the server refused before it reached the registry, because
// the requestState it carried was not one to run on: reason says why
// (protocol.StateForged, …). Its outcome is refused; the tool and its
// arguments are recorded as for any call. It fits protocol.Server's
// Refused.
func (r *Registry) RecordRefusal(call *protocol.Call, req *protocol.CallToolRequest, reason string) {
	if r.opts.Audit == nil && r.opts.Observe == nil {
		return
	}
	args := objectArgs(req.Arguments)
	c := called{args: args, outcome: outcomeRefused, asked: asked{how: "input_required"}, refusal: reason}
	if e, ok := r.snap.Load().Lookup(req.Name); ok {
		c.entry = e
	}
	r.record(call, req, time.Now(), c)
}

// RecordTask adds one entry to the audit log, when there is one, for a
// task created or ended: its tool, its id, and for its end how it ended
// (the outcome: completed, failed, cancelled, expired) and how long it
// lived. It fits protocol.Server's TaskRecorded.
func (r *Registry) RecordTask(ev protocol.TaskEvent) {
	if r.opts.Audit == nil {
		return
	}
	ae := entryOf(ev.Call, time.Now().Add(-ev.Duration), audit.KindTask, ev.Tool)
	ae.Task, ae.Outcome = ev.ID, audit.TaskCreated
	if ev.Ended {
		ae.Outcome = ev.Status
	}
	if e, ok := r.snap.Load().Lookup(ev.Tool); ok {
		ae.ManifestName, ae.Method = e.Tool.Name, e.Method
	}
	r.opts.Audit.Record(ae)
}

// contentSize is the size of a result as every client sees it: its
// content's text. (Its structured content, for the clients that take it,
// is the same JSON again.)
func contentSize(res *protocol.CallToolResult) int {
	if res == nil {
		return 0
	}
	n := 0
	for _, c := range res.Content {
		if c.JSON != nil {
			n += len(c.JSON)
		} else {
			n += len(c.Text)
		}
	}
	return n
}

// notServed is the outcome of a call to a name the snapshot does not
// serve: refused when a filter keeps that tool from clients, else an
// unknown tool.
func notServed(snap *Snapshot, name string) string {
	for _, u := range snap.Unserved {
		if u.Filtered && u.Name == name {
			return outcomeRefused
		}
	}
	return outcomeUnknownTool
}

// recordRead adds one entry to the audit log for a resources/read, as
// record does for a call: the URI read, the backend method and the
// template it went through, and a template's variables as its arguments.
func (r *Registry) recordRead(call *protocol.Call, req *protocol.ReadResourceRequest, start time.Time, did aRead) {
	if r.opts.Audit == nil && r.opts.Observe == nil {
		return
	}
	ae := entryOf(call, start, audit.KindResource, req.URI)
	ae.Method, ae.Outcome, ae.Code, ae.BytesOut = did.method, did.outcome, backendCode(did.backendErr), did.bytesOut
	if t := did.template; t != nil {
		vars, _ := json.Marshal(did.vars, json.Deterministic(true))
		ae.ManifestName, ae.ArgKeys = t.Template.URITemplate, audit.Keys(vars)
		if r.opts.AuditValues {
			ae.Args, ae.ArgsCut = audit.Values(t.Template.Schema, vars)
		}
	}
	r.recordEntry(call, ae)
}

// recordPrompt adds one entry to the audit log for a prompts/get, as
// record does for a call; e is the prompt, nil when none was served.
func (r *Registry) recordPrompt(call *protocol.Call, req *protocol.GetPromptRequest, start time.Time, e *PromptEntry, did aRead) {
	if r.opts.Audit == nil && r.opts.Observe == nil {
		return
	}
	args, _ := json.Marshal(req.Arguments, json.Deterministic(true))
	if req.Arguments == nil {
		args = jsontext.Value("{}")
	}
	ae := entryOf(call, start, audit.KindPrompt, req.Name)
	ae.Outcome, ae.Code, ae.BytesIn, ae.BytesOut, ae.ArgKeys = did.outcome, backendCode(did.backendErr), len(args), did.bytesOut, audit.Keys(args)
	if e != nil {
		ae.ManifestName = e.Prompt.Name
	}
	if r.opts.AuditValues {
		ae.Args, ae.ArgsCut = audit.Values(nil, args)
	}
	r.recordEntry(call, ae)
}

// entryOf returns an audit entry of kind for name, which call asked for
// at start: who asked, and how long it took until now.
func entryOf(call *protocol.Call, start time.Time, kind, name string) *audit.Entry {
	client := call.Client()
	return &audit.Entry{
		Time: audit.Timestamp(start), Transport: call.Transport(), Session: call.SessionID(), Principal: call.Principal().String(),
		Client: client.Name, ClientVersion: client.Version, ProtocolVersion: call.ProtocolVersion(),
		Kind: kind, Name: name, Duration: audit.Millis(time.Since(start)),
		NotificationsDropped: call.NotificationsDropped(),
	}
}

// backendCode is the code of a backend's JSON-RPC error, nil for any
// other error.
func backendCode(err error) *int64 {
	var rpcErr *socketclient.RPCError
	if errors.As(err, &rpcErr) {
		return &rpcErr.Code
	}
	return nil
}
