package protocol

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// fakeContent serves a few resources, a template, prompts and
// completions, for the transcripts and tests of their methods.
type fakeContent struct {
	resources *ResourceSet
	prompts   *PromptSet
	blocking  bool // reading test://wait waits until the request is cancelled
}

func half() *float64 { h := 0.5; return &h }

func newFakeContent() *fakeContent {
	return &fakeContent{
		resources: NewResourceSet([]Resource{
			{URI: "test://text", Name: "text", Title: "A text", Description: "Some text.", MIMEType: "text/plain",
				Annotations: &Annotations{Audience: []string{"user", "assistant"}, Priority: half()}},
			{URI: "test://blob", Name: "blob", MIMEType: "image/png"},
			{URI: "test://fail", Name: "fail"},
			{URI: "test://wait", Name: "wait"},
		}, []ResourceTemplate{
			{URITemplate: "test://items/{id}", Name: "item", Title: "An item", MIMEType: "application/json"},
		}),
		prompts: NewPromptSet([]Prompt{
			{Name: "greet", Title: "Greet", Description: "Greets someone.", Arguments: []PromptArgument{
				{Name: "name", Title: "Name", Description: "Who.", Required: true}, {Name: "tone"}}},
			{Name: "embed", Description: "Embeds an item.", Arguments: []PromptArgument{{Name: "id", Required: true}}},
		}),
		blocking: true,
	}
}

func (f *fakeContent) Resources() *ResourceSet { return f.resources }

func (f *fakeContent) ReadResource(ctx context.Context, call *Call, req *ReadResourceRequest) (*ReadResourceResult, error) {
	contents := func(c ResourceContents) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []ResourceContents{c}}, nil
	}
	switch uri := req.URI; {
	case uri == "test://text":
		return contents(ResourceContents{URI: uri, MIMEType: "text/plain", Text: "hello"})
	case uri == "test://blob":
		return contents(ResourceContents{URI: uri, MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}})
	case uri == "test://fail":
		return nil, &Error{Code: CodeInternalError, Message: "the backend returned error -32004 for items.get: no such item"}
	case uri == "test://wait" && f.blocking:
		<-ctx.Done()
		return nil, ctx.Err()
	case strings.HasPrefix(uri, "test://items/"):
		// As read from a backend: written from these bytes.
		text := []byte(fmt.Sprintf(`{"id":%q}`, strings.TrimPrefix(uri, "test://items/")))
		return contents(ResourceContents{URI: uri, MIMEType: "application/json", TextBytes: text})
	}
	return nil, fmt.Errorf("%w: %s", ErrResourceNotFound, req.URI)
}

func (f *fakeContent) Prompts() *PromptSet { return f.prompts }

func (f *fakeContent) GetPrompt(ctx context.Context, call *Call, req *GetPromptRequest) (*GetPromptResult, error) {
	switch req.Name {
	case "greet":
		if req.Arguments["name"] == "" {
			return nil, fmt.Errorf(`%w: argument "name" of prompt greet is required`, ErrInvalidParams)
		}
		return &GetPromptResult{Description: "Greets someone.", Messages: []PromptMessage{
			{Role: "user", Text: "Greet " + req.Arguments["name"] + "."},
			{Role: "assistant", Text: ""},
		}}, nil
	case "embed":
		res, err := f.ReadResource(ctx, call, &ReadResourceRequest{URI: "test://items/" + req.Arguments["id"]})
		if err != nil {
			return nil, err
		}
		return &GetPromptResult{Messages: []PromptMessage{{Role: "user", Text: "Look:"}, {Role: "user", Resource: &res.Contents[0]}}}, nil
	}
	return nil, fmt.Errorf("%w: unknown prompt %q", ErrInvalidParams, req.Name)
}

// Complete completes greet's name from 150 names, id of the item template
// from three.
func (f *fakeContent) Complete(_ context.Context, _ *Call, req *CompleteRequest) (*CompleteResult, error) {
	var all []string
	switch {
	case req.Prompt == "greet" && req.Argument == "name":
		for i := range 150 {
			all = append(all, fmt.Sprintf("%s%03d", req.Value, i))
		}
	case req.Prompt == "greet" && req.Argument == "tone":
	case req.URI == "test://items/{id}" && req.Argument == "id":
		all = []string{"a1", "a2", "b1"}
		all = slices.DeleteFunc(all, func(s string) bool { return !strings.HasPrefix(s, req.Value) })
	default:
		return nil, fmt.Errorf("%w: nothing to complete for %s%s argument %q", ErrInvalidParams, req.Prompt, req.URI, req.Argument)
	}
	return &CompleteResult{Values: all}, nil
}

// A server without providers answers as it did before it had any: empty
// lists, unknown resources and prompts, no completion/complete.
func TestWithoutProvidersListsAreEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		s := startSession(t, t.Context(), srv, Version20251125)
		s.expect(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, `{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`)
		s.expect(`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`, `{"jsonrpc":"2.0","id":2,"result":{"prompts":[]}}`)
		s.expect(`{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"this server offers no completions"}}`)
		srv.NotifyPromptsChanged()
		srv.NotifyResourcesChanged()
		s.close()
	})
}

// Each list's changes are announced with its own notification, after
// initialize and on the listen streams that asked for that list, and only
// when the server declares that it announces them.
func TestPromptAndResourceListChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		c := newFakeContent()
		srv.Resources, srv.Prompts, srv.Completions = c, c, c
		srv.ResourcesListChanged, srv.PromptsListChanged = true, true
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(initLine(1, Version20251125))
		s.exchange(modernReq(`"p"`, "subscriptions/listen", `"notifications":{"promptsListChanged":true}`))
		s.exchange(modernReq(`"r"`, "subscriptions/listen", `"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["test://text"]}`))
		srv.NotifyPromptsChanged()
		srv.NotifyResourcesChanged()
		want := []string{
			`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
			`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"p"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
			`{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"r"}}}`,
		}
		if d := cmp.Diff(want, s.step()); d != "" {
			t.Errorf("notifications (-want +got):\n%s", d)
		}
		s.close()
	})
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(nil)
		c := newFakeContent()
		srv.Resources, srv.Prompts = c, c // changes not announced
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(initLine(1, Version20251125))
		ack := s.exchange(modernReq(`"p"`, "subscriptions/listen", `"notifications":{"promptsListChanged":true,"toolsListChanged":true}`))
		if len(ack) != 1 || !strings.Contains(ack[0], `"notifications":{"toolsListChanged":true}`) {
			t.Errorf("acknowledged %q, want tools only", ack)
		}
		srv.NotifyPromptsChanged()
		srv.NotifyResourcesChanged()
		if got := s.step(); len(got) != 0 {
			t.Errorf("announced undeclared changes: %q", got)
		}
		s.close()
	})
}

func TestResourceAndPromptSetsEqual(t *testing.T) {
	a := NewResourceSet([]Resource{{URI: "a:b", Name: "b"}}, []ResourceTemplate{{URITemplate: "a:{x}", Name: "x"}})
	b := NewResourceSet([]Resource{{URI: "a:b", Name: "b"}}, []ResourceTemplate{{URITemplate: "a:{x}", Name: "x"}})
	c := NewResourceSet([]Resource{{URI: "a:b", Name: "b"}}, []ResourceTemplate{{URITemplate: "a:{x}", Name: "x", Title: "X"}})
	if !a.Equal(b) || a.Equal(c) || a.Equal(nil) || !(*ResourceSet)(nil).Equal(nil) {
		t.Error("ResourceSet.Equal")
	}
	p := NewPromptSet([]Prompt{{Name: "p", Arguments: []PromptArgument{{Name: "a"}}}})
	q := NewPromptSet([]Prompt{{Name: "p", Arguments: []PromptArgument{{Name: "a", Required: true}}}})
	if !p.Equal(NewPromptSet([]Prompt{{Name: "p", Arguments: []PromptArgument{{Name: "a"}}}})) || p.Equal(q) || p.Equal(nil) {
		t.Error("PromptSet.Equal")
	}
}

// A read's text as read is written from its bytes, in parts, and reads
// exactly as the same text encoded whole, escapes included.
func TestAReadIsWrittenFromTheBytesRead(t *testing.T) {
	text := []byte("{\"q\":\"a \\\"b\\\"\"}\n\tline\u2028two é \x7f")
	zero := 0
	for _, tail := range []resultTail{{}, {TTLMs: &zero, CacheScope: "private", ResultType: "complete"}} {
		spliced := &readResourceResult{ReadResourceResult{Contents: []ResourceContents{{URI: "u:x", MIMEType: "text/plain", TextBytes: text}}}, tail, inputOr{}}
		m, err := spliced.encodeMessage(jsontext.Value(`"id\"1"`))
		if err != nil || len(m.parts) != 3 || !m.parts[1].counted {
			t.Fatalf("not written in parts around the bytes: %+v, %v", m.parts, err)
		}
		whole, _ := encodeResult(jsontext.Value(`"id\"1"`), &readResourceResult{ReadResourceResult{Contents: []ResourceContents{{URI: "u:x", MIMEType: "text/plain", Text: string(text)}}}, tail, inputOr{}})
		if got := m.Bytes(); string(got) != string(whole) {
			t.Errorf("spliced:\n%s\nwhole:\n%s", got, whole)
		}
	}
}

// bigReads is a ResourceProvider whose every read is a large text, read
// as a backend's reply is: counted with its call's Grow, then held.
type bigReads struct {
	fakeContent
	size    int
	started atomic.Int32
}

func (b *bigReads) ReadResource(ctx context.Context, call *Call, req *ReadResourceRequest) (*ReadResourceResult, error) {
	b.started.Add(1)
	for n := 0; n < b.size; n += 16 << 10 {
		if err := call.Grow(ctx, 16<<10); err != nil {
			return nil, err
		}
	}
	text := bytes.Repeat([]byte("x"), b.size)
	return &ReadResourceResult{Contents: []ResourceContents{{URI: req.URI, TextBytes: text}}}, nil
}

// Reads are bounded as tool calls are: a client that stops reading gets
// backpressure, the bytes held stay at the bound (plus one read's), and
// every byte is released once the responses are written.
func TestReadsAreBoundedLikeCalls(t *testing.T) {
	const (
		limit = 1 << 20
		size  = 100 << 10
		reads = 100
	)
	synctest.Test(t, func(t *testing.T) {
		br := &bigReads{fakeContent: *newFakeContent(), size: size}
		srv := newTestServer(nil)
		srv.Resources = br
		srv.MaxHeldBytes, srv.MaxInFlight = limit, 8
		var g *gate
		s := startSessionTo(t, t.Context(), srv, Version20251125, func(w io.Writer) io.Writer { g = newGate(w); return g })
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			for i := range reads {
				line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"test://big/%d"}}`, i, i)
				s.checker.ClientLine([]byte(line))
				io.WriteString(s.in, line+"\n")
			}
		}()
		synctest.Wait()
		if held := srv.heldBytes(); held < limit-(16<<10) || held > limit+size+(64<<10) {
			t.Errorf("%d bytes held, want the bound of %d, and at most one read more", held, limit)
		}
		if n := br.started.Load(); n == reads {
			t.Errorf("all %d reads ran for a client that reads nothing", n)
		}
		close(g.open)
		<-sent
		got, err := s.close()
		if len(got) != reads || err != nil {
			t.Errorf("%d responses, want %d; Serve: %v", len(got), reads, err)
		}
		if held := srv.heldBytes(); held != 0 {
			t.Errorf("%d bytes still counted once every response was written", held)
		}
	})
}
