package protocol

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrResourceNotFound is wrapped by a ResourceProvider's error for a URI
// it does not serve. Clients are sent -32002 before protocol 2026-07-28
// and -32602 from it, with the URI in the error's data, as each version's
// specification says.
var ErrResourceNotFound = &Error{Code: CodeResourceNotFound, Message: "resource not found"}

// Annotations are hints to clients about a resource or template: who its
// contents are for and how important they are. Every protocol version
// has them.
type Annotations struct {
	Audience []string `json:"audience,omitzero"`
	Priority *float64 `json:"priority,omitzero"`
}

// Resource is one resource as a client sees it. A client is sent the
// fields its protocol version has: Title from 2025-06-18.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MIMEType    string       `json:"mimeType,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
}

func (r Resource) encode(s shape) jsontext.Value {
	if s < shapeStructured {
		r.Title = ""
	}
	b, _ := json.Marshal(r, encodeOpts) // strings and numbers: it cannot fail
	return b
}

// ResourceTemplate is one resource template as a client sees it, shaped
// like a Resource.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MIMEType    string       `json:"mimeType,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
}

func (t ResourceTemplate) encode(s shape) jsontext.Value {
	if s < shapeStructured {
		t.Title = ""
	}
	b, _ := json.Marshal(t, encodeOpts)
	return b
}

// ResourceSet is an immutable list of resources and one of resource
// templates, each in the order clients see it. Like a ToolSet, one should
// be built per change and shared. It is safe for concurrent use.
type ResourceSet struct {
	resources *catalogue[Resource]
	templates *catalogue[ResourceTemplate]
}

// NewResourceSet returns a ResourceSet holding resources and templates
// in the given order.
func NewResourceSet(resources []Resource, templates []ResourceTemplate) *ResourceSet {
	return &ResourceSet{newCatalogue(resources), newCatalogue(templates)}
}

// Resources returns the resources; the caller must not modify the slice.
func (rs *ResourceSet) Resources() []Resource { return rs.resources.items }

// Templates returns the templates; the caller must not modify the slice.
func (rs *ResourceSet) Templates() []ResourceTemplate { return rs.templates.items }

// Equal reports whether two sets look the same to clients of any version.
func (rs *ResourceSet) Equal(other *ResourceSet) bool {
	if rs == nil || other == nil {
		return rs == other
	}
	return rs.resources.equal(other.resources) && rs.templates.equal(other.templates)
}

// ResourceContents is one part of what a resource holds: text, or binary
// data, which is sent base64-encoded as a blob.
type ResourceContents struct {
	URI      string
	MIMEType string
	// Text holds text; Blob, when it is not nil, binary data instead.
	Text string
	Blob []byte
	// TextBytes, when set, is the text as the UTF-8 bytes it was read as
	// (a backend's JSON, a file), written without being copied into Text.
	// Like a JSONResult's, those bytes are not counted against the
	// session's budget: the provider counted them as it read them
	// (Call.Grow). They must not change.
	TextBytes []byte
}

// MarshalJSONTo encodes the contents as MCP's TextResourceContents or
// BlobResourceContents.
func (c ResourceContents) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.TextBytes != nil {
		c.Text = string(c.TextBytes)
	}
	if c.Blob != nil {
		return json.MarshalEncode(enc, struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType,omitzero"`
			Blob     []byte `json:"blob"` // base64, the library's way with []byte
		}{c.URI, c.MIMEType, c.Blob})
	}
	return json.MarshalEncode(enc, struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitzero"`
		Text     string `json:"text"`
	}{c.URI, c.MIMEType, c.Text})
}

// ReadResourceRequest is what the server passes to a ResourceProvider.
type ReadResourceRequest struct {
	URI string
}

// ReadResourceResult is what a resource holds.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// ResourceProvider is what the server needs to serve resources and
// resource templates. Implementations must be safe for concurrent use.
type ResourceProvider interface {
	// Resources returns the current resources and templates. Like
	// ToolProvider.Tools it runs on the session's reader: it may wait for
	// a first load, but must not block on I/O after it.
	Resources() *ResourceSet
	// ReadResource reads the resource at a URI: one of Resources', or one
	// that matches a template. An unknown URI is an error wrapping
	// ErrResourceNotFound; resources/read has no error result, so anything
	// else that goes wrong is an error too, whose message the client
	// shows: wrap ErrInvalidParams for what the client got wrong, return
	// an *Error with CodeInternalError for the rest. call is the
	// request's Call: what the read holds is counted with its Grow. The
	// result then belongs to the server.
	ReadResource(ctx context.Context, call *Call, req *ReadResourceRequest) (*ReadResourceResult, error)
}

type listResourcesResult struct {
	Resources  []jsontext.Value `json:"resources"`
	NextCursor string           `json:"nextCursor,omitzero"`
	resultTail
}

func (r *listResourcesResult) encodeMessage(id jsontext.Value) (Message, error) {
	return encodeList(id, r)
}

func (r *listResourcesResult) takeItems() (string, []jsontext.Value) {
	items := r.Resources
	r.Resources = nil
	return "resources", items
}

type listTemplatesResult struct {
	ResourceTemplates []jsontext.Value `json:"resourceTemplates"`
	NextCursor        string           `json:"nextCursor,omitzero"`
	resultTail
}

func (r *listTemplatesResult) encodeMessage(id jsontext.Value) (Message, error) {
	return encodeList(id, r)
}

func (r *listTemplatesResult) takeItems() (string, []jsontext.Value) {
	items := r.ResourceTemplates
	r.ResourceTemplates = nil
	return "resourceTemplates", items
}

// noResources is what a server without a ResourceProvider serves.
var noResources = NewResourceSet(nil, nil)

func (ss *Session) resourceSet() *ResourceSet {
	if ss.resources == nil {
		return noResources
	}
	return ss.resources.Resources()
}

// listResources answers resources/list, a page at a time (see page).
func (ss *Session) listResources(_ context.Context, rq *request, p *listParams) (*listResourcesResult, error) {
	items, next, err := page(ss, rq, ss.resourceSet().resources, p.Cursor, "resource list")
	if err != nil {
		return nil, err
	}
	return &listResourcesResult{Resources: items, NextCursor: next}, nil
}

// listTemplates answers resources/templates/list, a page at a time.
func (ss *Session) listTemplates(_ context.Context, rq *request, p *listParams) (*listTemplatesResult, error) {
	items, next, err := page(ss, rq, ss.resourceSet().templates, p.Cursor, "template list")
	if err != nil {
		return nil, err
	}
	return &listTemplatesResult{ResourceTemplates: items, NextCursor: next}, nil
}

type readParams struct {
	metaParams
	inputParams
	URI *string `json:"uri"`
}

type readResourceResult struct {
	ReadResourceResult
	resultTail
	inputOr `json:"-"` // instead, in 2026-07-28: ask the client first
}

// readResource answers resources/read through the resource provider. Its
// resource-not-found error carries the code of the request's version.
func (ss *Session) readResource(ctx context.Context, rq *request, p *readParams) (*readResourceResult, error) {
	if p.URI == nil {
		return nil, fmt.Errorf(`%w: resources/read: "uri" is required`, ErrInvalidParams)
	}
	var res *ReadResourceResult
	var input *inputRequiredResult
	err := fmt.Errorf("%w: %s", ErrResourceNotFound, *p.URI)
	if ss.resources != nil {
		key := stateKey{method: "resources/read", name: *p.URI}
		var ran *Call
		res, input, ran, err = runAsking(ss, ctx, rq, &rq.flight.call, &p.inputParams, key, func(ctx context.Context, call *Call) (*ReadResourceResult, error) {
			return ss.resources.ReadResource(ctx, call, &ReadResourceRequest{URI: *p.URI})
		})
		ran.flushProgress()
	}
	if input != nil {
		return &readResourceResult{inputOr: inputOr{input}}, nil
	}
	if errors.Is(err, ErrResourceNotFound) {
		e := &Error{Code: CodeResourceNotFound, Message: err.Error()}
		e.Data, _ = json.Marshal(map[string]string{"uri": *p.URI}, encodeOpts)
		if rq.modern {
			e.Code = CodeInvalidParams // 2026-07-28 retired -32002
		}
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	return &readResourceResult{ReadResourceResult: *res}, nil
}

// encodeMessage encodes a resources/read response. The text of a
// result's one contents that is bytes as read (TextBytes) is written from
// those bytes, in parts around them, as a tool's result is.
func (res *readResourceResult) encodeMessage(id jsontext.Value) (Message, error) {
	if m, ok, err := res.encodeInput(id, res.resultTail); ok {
		return m, err
	}
	if len(res.Contents) != 1 || res.Contents[0].TextBytes == nil {
		b, err := encodeResult(id, res)
		return msgOf(b, nil), err
	}
	c := res.Contents[0]
	// {"jsonrpc":…,"result":{"contents":[{"uri":…,"mimeType":…,"text":"  …  "}],…}}
	head, err := encodeResult(id, &struct {
		Contents []ResourceContents `json:"contents"`
	}{[]ResourceContents{{URI: c.URI, MIMEType: c.MIMEType}}})
	if err != nil {
		return Message{}, err
	}
	head = head[:len(head)-len(`"}]}}`)]
	after, err := json.Marshal(&res.resultTail, encodeOpts)
	if err != nil {
		return Message{}, err
	}
	closing := []byte(`"}]`)
	if len(after) > len("{}") {
		closing = append(closing, ',')
	}
	closing = append(append(closing, after[1:]...), '}') // the tail's members, and the message's end
	return Message{parts: []part{{b: head}, {b: c.TextBytes, quoted: true, counted: true}, {b: closing}}}, nil
}
