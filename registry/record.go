package registry

import (
	"errors"
	"time"

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
	var schema jsontext.Value
	if c.entry != nil {
		ae.ManifestName, ae.Method, schema = c.entry.Tool.Name, c.entry.Method, c.entry.Tool.InputSchema
	}
	var rpcErr *socketclient.RPCError
	if errors.As(c.backendErr, &rpcErr) {
		ae.Code = &rpcErr.Code
	}
	if r.opts.AuditValues {
		ae.Args, ae.ArgsCut = audit.Values(schema, c.args)
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
