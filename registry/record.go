package registry

import (
	"errors"
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
	backendErr error // the backend's error, when it returned one
	asked      asked // what the user was asked, when they were
	err        error // protocol.ErrInputRequired: the question went out in the result

	found []string // the tools find_tools returned, by client name
}

// record adds one entry to the audit log, when there is one: who called
// what, when, how long it took and how it went; the names of the
// arguments, and their values only with AuditValues (secrets redacted).
func (r *Registry) record(req *protocol.CallToolRequest, start time.Time, c called) {
	if r.opts.Audit == nil {
		return
	}
	ae := &audit.Entry{
		Time: audit.Timestamp(start), Transport: req.Transport, Session: req.SessionID,
		Client: req.ClientName, ClientVersion: req.ClientVersion, ProtocolVersion: req.ProtocolVersion,
		Kind: audit.KindTool, Name: req.Name, Duration: audit.Millis(time.Since(start)), Outcome: c.outcome,
		BytesIn: len(req.Arguments), BytesOut: contentSize(c.res), ArgKeys: audit.Keys(c.args),
		Confirmation: c.asked.how, Answer: c.asked.answer,
	}
	ae.Found = c.found
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
func (r *Registry) recordRead(req *protocol.ReadResourceRequest, start time.Time, did aRead) {
	if r.opts.Audit == nil {
		return
	}
	ae := &audit.Entry{
		Time: audit.Timestamp(start), Transport: req.Transport, Session: req.SessionID,
		Client: req.ClientName, ClientVersion: req.ClientVersion, ProtocolVersion: req.ProtocolVersion,
		Kind: audit.KindResource, Name: req.URI, Method: did.method, Duration: audit.Millis(time.Since(start)),
		Outcome: did.outcome, Code: backendCode(did.backendErr), BytesOut: did.bytesOut,
	}
	if t := did.template; t != nil {
		vars, _ := json.Marshal(did.vars, json.Deterministic(true))
		ae.ManifestName, ae.ArgKeys = t.Template.URITemplate, audit.Keys(vars)
		if r.opts.AuditValues {
			ae.Args, ae.ArgsCut = audit.Values(t.Template.Schema, vars)
		}
	}
	r.opts.Audit.Record(ae)
}

// recordPrompt adds one entry to the audit log for a prompts/get, as
// record does for a call; e is the prompt, nil when none was served.
func (r *Registry) recordPrompt(req *protocol.GetPromptRequest, start time.Time, e *PromptEntry, did aRead) {
	if r.opts.Audit == nil {
		return
	}
	args, _ := json.Marshal(req.Arguments, json.Deterministic(true))
	if req.Arguments == nil {
		args = jsontext.Value("{}")
	}
	ae := &audit.Entry{
		Time: audit.Timestamp(start), Transport: req.Transport, Session: req.SessionID,
		Client: req.ClientName, ClientVersion: req.ClientVersion, ProtocolVersion: req.ProtocolVersion,
		Kind: audit.KindPrompt, Name: req.Name, Duration: audit.Millis(time.Since(start)), Outcome: did.outcome,
		Code: backendCode(did.backendErr), BytesIn: len(args), BytesOut: did.bytesOut, ArgKeys: audit.Keys(args),
	}
	if e != nil {
		ae.ManifestName = e.Prompt.Name
	}
	if r.opts.AuditValues {
		ae.Args, ae.ArgsCut = audit.Values(nil, args)
	}
	r.opts.Audit.Record(ae)
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
