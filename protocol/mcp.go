package protocol

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
)

// Protocol versions the bridge speaks.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestLegacyVersion is answered to an initialize asking for a version
	// the bridge does not know (or for a modern one, which initialize cannot carry).
	LatestLegacyVersion = Version20251125
	// ModernVersion is the first stateless protocol version.
	ModernVersion = Version20260728
)

// LegacyVersions lists the initialize-handshake versions, oldest first.
var LegacyVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// ModernVersions lists the stateless versions, oldest first.
var ModernVersions = []string{Version20260728}

func isLegacyVersion(v string) bool { return slices.Contains(LegacyVersions, v) }
func isModernVersion(v string) bool { return slices.Contains(ModernVersions, v) }

// shape says which optional fields a protocol version's schema has.
// Versions are ISO dates, so string comparison orders them.
type shape uint8

const (
	shapeAnnotations shape = 1 << iota // tool annotations (2025-03-26)
	shapeStructured                    // title, outputSchema, structuredContent, Implementation.title (2025-06-18)
	shapeModern                        // resultType, ttlMs, cacheScope (2026-07-28)
)

func shapeOf(version string) shape {
	var s shape
	if version >= Version20250326 {
		s |= shapeAnnotations
	}
	if version >= Version20250618 {
		s |= shapeStructured
	}
	if version >= Version20260728 {
		s |= shapeModern
	}
	return s
}

const numShapes = 8

// ToolAnnotations are the behaviour hints of a tool (2025-03-26 and later).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

func (a *ToolAnnotations) empty() bool {
	return a == nil || (a.Title == "" && a.ReadOnlyHint == nil && a.DestructiveHint == nil &&
		a.IdempotentHint == nil && a.OpenWorldHint == nil)
}

// Tool is one tool as a client sees it. InputSchema and OutputSchema are
// JSON objects, sent as they are.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  *ToolAnnotations
}

// appendJSON appends the tool as a JSON object holding only the fields the
// shape has.
func (t *Tool) appendJSON(buf []byte, s shape) []byte {
	buf = append(buf, `{"name":`...)
	buf = appendString(buf, t.Name)
	if t.Title != "" && s&shapeStructured != 0 {
		buf = append(buf, `,"title":`...)
		buf = appendString(buf, t.Title)
	}
	if t.Description != "" {
		buf = append(buf, `,"description":`...)
		buf = appendString(buf, t.Description)
	}
	buf = append(buf, `,"inputSchema":`...)
	if len(t.InputSchema) == 0 {
		buf = append(buf, `{"type":"object"}`...)
	} else {
		buf = append(buf, t.InputSchema...)
	}
	if len(t.OutputSchema) > 0 && s&shapeStructured != 0 {
		buf = append(buf, `,"outputSchema":`...)
		buf = append(buf, t.OutputSchema...)
	}
	if !t.Annotations.empty() && s&shapeAnnotations != 0 {
		b, _ := json.Marshal(t.Annotations) // cannot fail: plain fields
		buf = append(buf, `,"annotations":`...)
		buf = append(buf, b...)
	}
	return append(buf, '}')
}

// ToolSet is an immutable list of tools, in the order clients see them,
// with a lookup by name. It caches its encoded forms, so one ToolSet
// should be built per change of the tool table and shared; it is safe for
// concurrent use.
type ToolSet struct {
	tools  []Tool
	byName map[string]int
	// Generation identifies the set; a new set has a new generation, used
	// to make pagination cursors go stale when the list changes.
	generation uint64

	encOnce [numShapes]sync.Once
	enc     [numShapes][][]byte // per shape: each tool's JSON
}

var toolSetGeneration atomic.Uint64

// NewToolSet returns a ToolSet holding tools in the given order. Tools
// must have unique names; a later duplicate is dropped.
func NewToolSet(tools []Tool) *ToolSet {
	ts := &ToolSet{byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		if _, dup := ts.byName[t.Name]; dup {
			continue
		}
		// Schemas come from files and may span lines; a message must not.
		t.InputSchema = compact(t.InputSchema)
		t.OutputSchema = compact(t.OutputSchema)
		ts.byName[t.Name] = len(ts.tools)
		ts.tools = append(ts.tools, t)
	}
	ts.generation = toolSetGeneration.Add(1)
	return ts
}

// compact returns raw without insignificant white space. Invalid JSON
// (which the manifest loader rejects before it gets here) becomes the
// schema that accepts any object, so a message can never be corrupted.
func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	c, err := jsonscan.Compact(raw)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return c
}

// Len returns the number of tools.
func (ts *ToolSet) Len() int { return len(ts.tools) }

// Tools returns the tools; the caller must not modify the slice.
func (ts *ToolSet) Tools() []Tool { return ts.tools }

// Lookup returns the tool named name.
func (ts *ToolSet) Lookup(name string) (*Tool, bool) {
	i, ok := ts.byName[name]
	if !ok {
		return nil, false
	}
	return &ts.tools[i], true
}

// encoded returns each tool's JSON for shape s, encoding once per set.
func (ts *ToolSet) encoded(s shape) [][]byte {
	ts.encOnce[s].Do(func() {
		enc := make([][]byte, len(ts.tools))
		for i := range ts.tools {
			enc[i] = ts.tools[i].appendJSON(nil, s)
		}
		ts.enc[s] = enc
	})
	return ts.enc[s]
}

// Equal reports whether two sets would look the same to a client of any version.
func (ts *ToolSet) Equal(other *ToolSet) bool {
	if ts == nil || other == nil {
		return ts == other
	}
	if len(ts.tools) != len(other.tools) {
		return false
	}
	all := shapeAnnotations | shapeStructured
	a, b := ts.encoded(all), other.encoded(all)
	for i := range a {
		if string(a[i]) != string(b[i]) {
			return false
		}
	}
	return true
}

// Content is one content block of a tool result. Only text blocks are produced.
type Content struct {
	Type string // "text"
	Text string
	// TextBytes, when not nil, is the text instead of Text: a tool's
	// result can then be its own text content and its structured content
	// at once, one buffer and no copy. It must not change once returned.
	TextBytes []byte
}

// TextString returns the text, from Text or TextBytes.
func (c *Content) TextString() string {
	if c.TextBytes != nil {
		return string(c.TextBytes)
	}
	return c.Text
}

// MarshalJSON encodes the content as MCP does: {"type":…,"text":…}.
func (c Content) MarshalJSON() ([]byte, error) {
	o := jsonOut{}
	c.encode(&o)
	return o.buf, nil
}

func (c *Content) encode(o *jsonOut) {
	o.buf = append(o.buf, `{"type":`...)
	o.buf = appendString(o.buf, c.Type)
	o.buf = append(o.buf, `,"text":`...)
	o.text(c.Text, c.TextBytes)
	o.buf = append(o.buf, '}')
}

// CallToolResult is the outcome of running a tool.
type CallToolResult struct {
	Content []Content
	// StructuredContent is a JSON object, sent to clients whose version has
	// the field (2025-06-18 and later).
	StructuredContent json.RawMessage
	IsError           bool
}

// TextResult returns a result holding one text block.
func TextResult(text string, isError bool) *CallToolResult {
	return &CallToolResult{Content: []Content{{Type: "text", Text: text}}, IsError: isError}
}

func (r *CallToolResult) appendJSON(buf []byte, s shape) []byte {
	o := jsonOut{buf: buf}
	r.encode(&o, s)
	return o.buf
}

// encode writes the result to o: into one buffer, or with its large
// texts and structured content as parts of their own (see jsonOut).
func (r *CallToolResult) encode(o *jsonOut, s shape) {
	o.buf = append(o.buf, `{"content":[`...)
	for i := range r.Content {
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		r.Content[i].encode(o)
	}
	o.buf = append(o.buf, ']')
	if len(r.StructuredContent) > 0 && s&shapeStructured != 0 {
		o.buf = append(o.buf, `,"structuredContent":`...)
		o.raw(r.StructuredContent)
	}
	if r.IsError {
		o.buf = append(o.buf, `,"isError":true`...)
	}
	o.buf = append(o.buf, '}')
}

// CallToolRequest is what the bridge passes to a ToolProvider.
type CallToolRequest struct {
	Name string
	// Arguments is the JSON object the client sent, or nil when it sent none.
	Arguments json.RawMessage
	// ProtocolVersion is the version in force for this request.
	ProtocolVersion string
}

// ToolProvider is what the server needs from the tool table.
// Implementations must be safe for concurrent use.
type ToolProvider interface {
	// Tools returns the current tool set. It must not block on I/O.
	Tools() *ToolSet
	// CallTool runs a tool. An error means the call could not be routed
	// (an unknown tool: wrap ErrInvalidParams) and becomes a JSON-RPC error;
	// anything that goes wrong while running the tool is a result with
	// IsError set. The result then belongs to the server, which may write
	// it after CallTool returns: it must not change.
	CallTool(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)
}

// Implementation names the server in initialize and discover results.
type Implementation struct {
	Name    string
	Title   string
	Version string
}

func (impl Implementation) appendJSON(buf []byte, s shape) []byte {
	buf = append(buf, `{"name":`...)
	buf = appendString(buf, impl.Name)
	if impl.Title != "" && s&shapeStructured != 0 {
		buf = append(buf, `,"title":`...)
		buf = appendString(buf, impl.Title)
	}
	buf = append(buf, `,"version":`...)
	buf = appendString(buf, impl.Version)
	return append(buf, '}')
}

// appendInt appends n in decimal.
func appendInt(buf []byte, n int64) []byte { return strconv.AppendInt(buf, n, 10) }
