package protocol

import (
	"context"
	"maps"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Implementation names the server in initialize and discover results.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitzero"` // from 2025-06-18
	Version string `json:"version"`
}

func (impl Implementation) shaped(s shape) Implementation {
	if s < shapeStructured {
		impl.Title = ""
	}
	return impl
}

// ToolAnnotations are the behaviour hints of a tool (2025-03-26 and later).
type ToolAnnotations struct {
	Title           string `json:"title,omitzero"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitzero"`
	DestructiveHint *bool  `json:"destructiveHint,omitzero"`
	IdempotentHint  *bool  `json:"idempotentHint,omitzero"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitzero"`
}

// TaskSupport says whether a tool's calls may run as tasks, calls that
// outlive their request (see tasks.go).
type TaskSupport string

// The values of TaskSupport, as MCP 2025-11-25 names them in a tool's
// execution.taskSupport.
const (
	// TaskForbidden, or "", is a tool whose calls never run as tasks.
	TaskForbidden TaskSupport = "forbidden"
	// TaskOptional is a tool whose calls run as tasks when the client
	// can take one, and as ordinary calls otherwise.
	TaskOptional TaskSupport = "optional"
	// TaskRequired is a tool whose calls run only as tasks: a client that
	// cannot take one cannot call it.
	TaskRequired TaskSupport = "required"
)

// allows reports whether calls of a tool with support s may run as tasks.
func (s TaskSupport) allows() bool { return s == TaskOptional || s == TaskRequired }

// ToolExecution is how a tool's calls may run: MCP 2025-11-25's
// ToolExecution.
type ToolExecution struct {
	TaskSupport TaskSupport `json:"taskSupport,omitzero"`
}

// Tool is one tool as a client sees it. InputSchema and OutputSchema are
// JSON objects, sent as they are (without insignificant white space). A
// client is sent the fields its protocol version has: Title and
// OutputSchema from 2025-06-18, Annotations from 2025-03-26, Execution in
// 2025-11-25 alone (in 2026-07-28 a client learns that a call became a
// task from its result).
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitzero"`
	Description  string           `json:"description,omitzero"`
	InputSchema  jsontext.Value   `json:"inputSchema"`
	OutputSchema jsontext.Value   `json:"outputSchema,omitzero"`
	Annotations  *ToolAnnotations `json:"annotations,omitzero"`
	Execution    *ToolExecution   `json:"execution,omitzero"`
	// ParamHeaders are the parameters that InputSchema marks with
	// x-mcp-header, found by whoever made the tool (a ToolSet does not
	// read schemas): over Streamable HTTP, a 2026-07-28 client mirrors
	// each into a header, which the transport checks against the body.
	ParamHeaders []ParamHeader `json:"-"`
}

// ParamHeader is a tool parameter that 2026-07-28 clients mirror into
// the HTTP header Mcp-Param-{Name} on the Streamable HTTP transport.
type ParamHeader struct {
	// Name is the x-mcp-header value, as the schema spells it; header
	// names are compared without regard to case.
	Name string
	// Path is the chain of property names from the arguments object to
	// the parameter.
	Path []string
}

// anyObject is the input schema of a tool that declares none.
var anyObject = jsontext.Value(`{"type":"object"}`)

// shaped returns the tool as a client of shape s sees it.
func (t Tool) shaped(s shape) Tool {
	if s < shapeStructured {
		t.Title, t.OutputSchema = "", nil
	}
	if s < shapeAnnotations || t.Annotations == nil || *t.Annotations == (ToolAnnotations{}) {
		t.Annotations = nil
	}
	if s != shapeTasks || t.Execution == nil || !t.Execution.TaskSupport.allows() {
		t.Execution = nil // forbidden is the default: said by saying nothing
	}
	return t
}

// encode returns the tool's JSON for shape s. A schema that is not JSON
// (the manifest loader refuses them first) must not corrupt the list: the
// tool is then listed as accepting any object.
func (t Tool) encode(s shape) jsontext.Value {
	b, err := json.Marshal(t.shaped(s), encodeOpts)
	if err != nil {
		t.InputSchema, t.OutputSchema = anyObject, nil
		b, _ = json.Marshal(t.shaped(s), encodeOpts)
	}
	return b
}

// ToolSet is an immutable list of tools, in the order clients see them.
// It keeps each tool's JSON per protocol shape once it has been asked
// for, so one ToolSet should be built per change of the tool table and
// shared. It is safe for concurrent use.
type ToolSet struct {
	catalogue[Tool]
	params map[string][]ParamHeader // by tool name, of the tools that have any
	tasks  map[string]TaskSupport   // by tool name, of the tools whose calls may run as tasks
}

// NewToolSet returns a ToolSet holding tools in the given order. Tools
// must have unique names; a later duplicate is dropped. A tool without an
// input schema gets one that accepts any object.
func NewToolSet(tools []Tool) *ToolSet {
	ts := &ToolSet{}
	kept := make([]Tool, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		if len(t.InputSchema) == 0 {
			t.InputSchema = anyObject
		}
		if len(t.ParamHeaders) > 0 {
			if ts.params == nil {
				ts.params = map[string][]ParamHeader{}
			}
			ts.params[t.Name] = t.ParamHeaders
		}
		if t.Execution != nil && t.Execution.TaskSupport.allows() {
			if ts.tasks == nil {
				ts.tasks = map[string]TaskSupport{}
			}
			ts.tasks[t.Name] = t.Execution.TaskSupport
		}
		kept = append(kept, t)
	}
	ts.items = kept
	return ts
}

// ParamHeaders returns the parameters the named tool's clients mirror
// into headers; none for a tool without any, or not in the set. The
// caller must not modify the slice.
func (ts *ToolSet) ParamHeaders(tool string) []ParamHeader { return ts.params[tool] }

// TaskSupport returns whether the named tool's calls may run as tasks:
// TaskForbidden for a tool not in the set.
func (ts *ToolSet) TaskSupport(tool string) TaskSupport {
	if s, ok := ts.tasks[tool]; ok {
		return s
	}
	return TaskForbidden
}

// Has reports whether the set has a tool of that name.
func (ts *ToolSet) Has(tool string) bool {
	return slices.ContainsFunc(ts.items, func(t Tool) bool { return t.Name == tool })
}

// Len returns the number of tools.
func (ts *ToolSet) Len() int { return len(ts.items) }

// Tools returns the tools; the caller must not modify the slice.
func (ts *ToolSet) Tools() []Tool { return ts.items }

// Equal reports whether two sets look the same to clients of any version
// and have the same parameter headers and task support.
func (ts *ToolSet) Equal(other *ToolSet) bool {
	if ts == nil || other == nil {
		return ts == other
	}
	return ts.equal(&other.catalogue) && maps.Equal(ts.tasks, other.tasks) && maps.EqualFunc(ts.params, other.params, func(a, b []ParamHeader) bool {
		return slices.EqualFunc(a, b, func(x, y ParamHeader) bool { return x.Name == y.Name && slices.Equal(x.Path, y.Path) })
	})
}

// Content is one content block of a tool result. Only text blocks are produced.
type Content struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
	// JSON, when set, is the block's text as the JSON bytes it is, sent
	// as a string without being copied into Text (see JSONResult).
	JSON jsontext.Value `json:"-"`
}

// MarshalJSONTo encodes the block as MCP says, its text from JSON when
// that is set.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{c.Type, c.String()})
}

// String returns the block's text.
func (c Content) String() string {
	if c.JSON != nil {
		return string(c.JSON)
	}
	return c.Text
}

// CallToolResult is the outcome of running a tool.
type CallToolResult struct {
	Content []Content `json:"content"`
	// StructuredContent is a JSON object, sent to clients whose version has
	// the field (2025-06-18 and later).
	StructuredContent jsontext.Value `json:"structuredContent,omitzero"`
	IsError           bool           `json:"isError,omitzero"`

	// shared records that StructuredContent is the bytes of the one
	// content block's JSON (JSONResult): held once, and counted once.
	shared bool
}

// JSONResult returns the result of a tool whose output is the JSON value
// v: one text block holding v as text, and v as structured content when
// it is an object, both written from v's bytes. Those bytes are not
// counted against the session's budget: the provider counted them as it
// read them (Call.Grow). Neither v nor the result may change.
func JSONResult(v jsontext.Value) *CallToolResult {
	res := &CallToolResult{Content: []Content{{Type: "text", JSON: v}}}
	if v.Kind() == '{' {
		res.StructuredContent, res.shared = v, true
	}
	return res
}

// TextResult returns a result holding one text block.
func TextResult(text string, isError bool) *CallToolResult {
	return &CallToolResult{Content: []Content{{Type: "text", Text: text}}, IsError: isError}
}

// CallToolRequest is what the bridge passes to a ToolProvider: the
// tools/call's params. Who calls, and what the call may do towards its
// client, is its Call.
type CallToolRequest struct {
	Name string
	// Arguments is the JSON object the client sent, or nil when it sent none.
	Arguments jsontext.Value
}

// ToolProvider is what the server needs from the tool table.
// Implementations must be safe for concurrent use.
type ToolProvider interface {
	// Tools returns the current tool set. It runs on the session's reader:
	// it may wait for a first load, but must not block on I/O after it.
	Tools() *ToolSet
	// CallTool runs a tool. An error means the call could not be routed
	// (an unknown tool: wrap ErrInvalidParams) and becomes a JSON-RPC error;
	// anything that goes wrong while running the tool is a result with
	// IsError set. call is the request's: what the call holds is counted
	// with its Grow, and its Confirm asks the user (when Confirm returns
	// ErrInputRequired, CallTool returns at once: the server answers with
	// the question). The result then belongs to the server, which may
	// write it after CallTool returns: it must not change.
	CallTool(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error)
}

// serverCapabilities declares what the server answers, in every era.
// Prompts and resources are declared whether or not the server has any:
// their list methods are always answered (empty without a provider).
type serverCapabilities struct {
	Completions *struct{}           `json:"completions,omitzero"` // from 2025-03-26
	Logging     struct{}            `json:"logging"`
	Prompts     listCapability      `json:"prompts"`
	Resources   listCapability      `json:"resources"`
	Tools       listCapability      `json:"tools"`
	Tasks       *tasksCapability    `json:"tasks,omitzero"`      // 2025-11-25
	Extensions  map[string]struct{} `json:"extensions,omitzero"` // 2026-07-28
}

// tasksCapability is 2025-11-25's tasks capability: tasks/list,
// tasks/cancel, and tools/call as a task.
type tasksCapability struct {
	List     struct{} `json:"list"`
	Cancel   struct{} `json:"cancel"`
	Requests struct {
		Tools struct {
			Call struct{} `json:"call"`
		} `json:"tools"`
	} `json:"requests"`
}

// listCapability declares a list whose changes the server announces.
// Resources' subscribe is never declared: the bridge cannot know when a
// backend's data changes.
type listCapability struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// capabilities returns what the server declares to a client of shape s,
// in the modern era or not. Tasks are declared where they are served, in
// each generation's way: 2025-11-25's capability, 2026-07-28's extension;
// whether some tool runs as a task is each tool's to say (its
// taskSupport), which does not wait for the manifests' first load.
func (ss *Session) capabilities(s shape, modern bool) serverCapabilities {
	srv := ss.srv
	c := serverCapabilities{
		Prompts:   listCapability{ListChanged: srv.PromptsListChanged && ss.prompts != nil},
		Resources: listCapability{ListChanged: srv.ResourcesListChanged && ss.resources != nil},
		Tools:     listCapability{ListChanged: srv.ListChanged},
	}
	// Declared whenever the server can answer completion/complete, with no
	// values when no manifest declares a completion: deciding on the
	// manifests would make initialize wait for their first load.
	if s >= shapeAnnotations && ss.completions != nil {
		c.Completions = &struct{}{}
	}
	switch {
	case modern:
		c.Extensions = map[string]struct{}{tasksExtension: {}}
	case s == shapeTasks:
		c.Tasks = &tasksCapability{}
	}
	return c
}
