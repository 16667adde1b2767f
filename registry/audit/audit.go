// Package audit keeps the record of the calls a bridge serves: one JSON
// line per call in a log file that every bridge process of the user may
// share (Claude Desktop, Claude Code and Cursor each start their own),
// and reads those files back for a summary.
//
// The registry builds an Entry at the end of each call and hands it to a
// Writer, which never blocks the call: a bounded queue feeds one writer
// goroutine, which appends whole lines under an advisory lock and rotates
// the file by size. Summarize reads the log and its rotated files.
//
// docs/audit.md documents the format, every field, and how several
// processes share a file.
package audit

import (
	"bytes"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// Kinds of entry.
const (
	KindTool     = "tool"     // a tools/call
	KindResource = "resource" // a resources/read
	KindPrompt   = "prompt"   // a prompts/get
	KindDropped  = "dropped"  // not a call: the count of entries lost before this line
	KindTask     = "task"     // not a call: a task created, or ended
)

// TaskCreated is the outcome of a KindTask entry that records a task's
// creation; one that records its end has how it ended: completed,
// failed, cancelled or expired.
const TaskCreated = "created"

// OutcomeOK is the outcome of a call that succeeded; every other outcome
// is an error of some kind (docs/audit.md lists them).
const OutcomeOK = "ok"

// Entry is one line of the audit log: one call. The registry fills it;
// the Writer adds ID and PID and makes client-supplied text safe. Fields
// that do not apply are left zero and omitted.
type Entry struct {
	// Time is when the call started, in RFC 3339 in UTC to the
	// millisecond (see Timestamp): entries sort and compare as strings.
	Time string `json:"time"`
	// ID identifies the entry: a random prefix per process, then a
	// sequence number, so a gap in a process's numbers shows lost entries.
	ID string `json:"id"`
	// PID is the bridge's process ID.
	PID int `json:"pid"`
	// Transport is how the client is connected: stdio, http, or cli for
	// the call command.
	Transport string `json:"transport,omitzero"`
	// Session identifies the client's session within the process.
	Session string `json:"session,omitzero"`
	// Principal is who the call was for, which limits and rights key
	// on: a named client ("client:cursor"), else "process" on stdio, a
	// digest of the bearer token over HTTP ("token:3f9a0c1d2e4b5a6f"),
	// else the session or the connection.
	Principal string `json:"principal,omitzero"`
	// Client and ClientVersion are what the client calls itself (its
	// clientInfo), made safe: see safetext.Field.
	Client        string `json:"client,omitzero"`
	ClientVersion string `json:"client_version,omitzero"`
	// ProtocolVersion is the MCP version in force for the call.
	ProtocolVersion string `json:"protocol_version,omitzero"`
	// Kind says what was called: KindTool, KindResource, KindPrompt; or
	// KindDropped for the line that counts lost entries.
	Kind string `json:"kind"`
	// Name is what the client asked for: the tool's client name (in
	// search mode, the tool call_tool ran), a resource's URI, a prompt's
	// name.
	Name string `json:"name,omitzero"`
	// ManifestName is the manifest's name for it, when it is served.
	ManifestName string `json:"manifest_name,omitzero"`
	// Method is the backend method called, when there is one.
	Method string `json:"method,omitzero"`
	// Duration is how long the call took, in milliseconds to the
	// microsecond (see Millis).
	Duration float64 `json:"dur_ms"`
	// Outcome is OutcomeOK or the kind of error (docs/audit.md).
	Outcome string `json:"outcome,omitzero"`
	// Code is the backend's JSON-RPC error code, for a backend error.
	Code *int64 `json:"code,omitzero"`
	// Confirmation is how the user was asked to confirm the call
	// (elicitation, input_required), when they were; Answer is what they
	// answered (accept: yes; no: the form sent back with no; decline;
	// cancel), or none when no answer came (none in time, the call
	// cancelled, or asking failed).
	Confirmation string `json:"confirmation,omitzero"`
	Answer       string `json:"answer,omitzero"`
	// Refusal says why an answer to a confirmation (a 2026-07-28
	// requestState) was refused before it was read, the call not run:
	// forged, expired, replayed, other_call (issued for another tool or
	// other arguments), or too_many.
	Refusal string `json:"refusal,omitzero"`
	// BytesIn and BytesOut are the sizes of the arguments and of the
	// result as the client sees them.
	BytesIn  int `json:"bytes_in"`
	BytesOut int `json:"bytes_out"`
	// ArgKeys are the names of the top-level arguments, in order: the
	// shape of the call, never its values (see Keys).
	ArgKeys []string `json:"arg_keys,omitzero"`
	// Args are the argument values with secrets redacted, only when
	// values are recorded (see Values); ArgsCut says some were shortened
	// or, when Args is absent, that they were too large to keep.
	Args    jsontext.Value `json:"args,omitzero"`
	ArgsCut bool           `json:"args_cut,omitzero"`
	// Found are the client names of the tools a search-mode find_tools
	// call returned, best first (never the request's words: those are
	// in Args, with values recorded).
	Found []string `json:"found,omitzero"`
	// Dropped is, on a KindDropped line, how many entries were lost
	// before it: recorded while the queue was full, or not written
	// because the file could not be written.
	Dropped int64 `json:"dropped,omitzero"`
	// NotificationsDropped is how many notifications about the call were
	// not sent to its client: progress not above the last value sent,
	// log messages past their bound, or either while the client did not
	// read (see protocol.Call.NotificationsDropped).
	NotificationsDropped int `json:"notifications_dropped,omitzero"`
	// Task is the id of the task the call runs as, on a KindTool line,
	// or of the task a KindTask line records.
	Task string `json:"task,omitzero"`
}

// timeLayout is the layout of Entry.Time: fixed width, so that times
// compare as strings.
const timeLayout = "2006-01-02T15:04:05.000Z"

// Timestamp returns t as Entry.Time has it: RFC 3339, UTC, to the
// millisecond.
func Timestamp(t time.Time) string { return t.UTC().Format(timeLayout) }

// Millis returns d as Entry.Duration has it: in milliseconds, to the
// microsecond.
func Millis(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}

// Bounds of the text of an entry.
const (
	maxName   = 256 // names, methods, URIs
	maxClient = 128 // client name and version, session, transport, protocol version
	maxKeys   = 64  // argument names kept
	maxKey    = 64  // bytes of one argument name
)

// Clean makes the entry's text safe as the Writer does before it writes
// it: for a reader that keeps an entry the log never had, such as the
// owner's console's record of a call.
func (e *Entry) Clean() { e.clean() }

// clean makes the entry's text safe, each string a field of a record
// (safetext.Field); the client's strings are anyone's.
func (e *Entry) clean() {
	for _, f := range []struct {
		s   *string
		max int
	}{
		{&e.Transport, maxClient}, {&e.Session, maxClient}, {&e.Principal, maxClient}, {&e.Client, maxClient}, {&e.ClientVersion, maxClient},
		{&e.ProtocolVersion, maxClient}, {&e.Name, maxName}, {&e.ManifestName, maxName}, {&e.Method, maxName},
		{&e.Outcome, maxClient}, {&e.Confirmation, maxClient}, {&e.Answer, maxClient}, {&e.Refusal, maxClient}, {&e.Task, maxClient},
	} {
		*f.s = safetext.Field(*f.s, f.max)
	}
	if len(e.Found) > maxKeys {
		e.Found = e.Found[:maxKeys]
	}
	for i, n := range e.Found {
		e.Found[i] = safetext.Field(n, maxName)
	}
	if len(e.ArgKeys) > maxKeys {
		e.ArgKeys = e.ArgKeys[:maxKeys]
	}
	for i, k := range e.ArgKeys {
		e.ArgKeys[i] = safetext.Field(k, maxKey)
	}
}

// Keys returns the names of the top-level members of a JSON object, in
// order, at most 64 of them: the shape of a call's arguments. It returns
// nil for anything but an object.
func Keys(args jsontext.Value) []string {
	// A decoder reads a bytes.Buffer in place (and never writes to it): a
	// bytes.Reader would be copied, at many times the cost.
	dec := jsontext.NewDecoder(bytes.NewBuffer(args), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	var keys []string
	for len(keys) < maxKeys && dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			break
		}
		keys = append(keys, safetext.Field(name.String(), maxKey))
		if dec.SkipValue() != nil {
			break
		}
	}
	return keys
}
