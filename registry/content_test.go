package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// notesContent is a manifest with a resource of each kind, a template, a
// completion and two prompts, like the example manifests.
const notesContent = `{"id":"notes",
  "tools":[
    {"name":"notes.get","description":"Get.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
    {"name":"notes.delete","description":"Delete.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}],
  "resources":[
    {"uri":"tairseach://status","name":"status","title":"Status","description":"Backend status.","method":"backend.status","annotations":{"priority":1}},
    {"uri":"tairseach://log","name":"log","description":"The log.","file":"log.txt","maxBytes":16},
    {"uri":"tairseach://motd","name":"motd","description":"Motd.","text":"hello","mimeType":"text/markdown"},
    {"uri":"tairseach://picture","name":"picture","description":"A picture.","file":"picture.png","mimeType":"image/png"}],
  "resourceTemplates":[
    {"uriTemplate":"tairseach://notes/{id}","name":"note","description":"A note.","method":"notes.get","params":{"full":true},
     "schema":{"type":"object","properties":{"id":{"type":"string","pattern":"^[0-9a-f]+$"}}},"complete":{"id":"notes.complete"}}],
  "prompts":[
    {"name":"notes.review","title":"Review","description":"Review a note.","arguments":[{"name":"id","required":true},{"name":"tone"}],
     "messages":[{"role":"user","text":"Review note {id}, {tone}."},{"role":"user","resource":"tairseach://notes/{id}"}],"complete":{"id":"notes.complete","tone":"notes.tones"}},
    {"name":"status","description":"Status.","messages":[{"role":"assistant","resource":"{uri}"}],"arguments":[{"name":"uri"}]}],
  "implementation":{"methods":{"notes.get":"notes.get","notes.delete":"notes.delete","status":"backend.status","complete":"notes.complete","tones":"notes.tones"}}}`

// contentRegistry loads files into a new folder, with a log file and a
// picture beside them, and a backend answering with fn.
func contentRegistry(t *testing.T, opts Options, files map[string]string, fn func(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error)) (*Registry, *fakeBackend) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	writeFile(t, filepath.Join(dir, "log.txt"), "first line\nsecond line\nthird\n")
	writeFile(t, filepath.Join(dir, "picture.png"), "\x89PNG\r\n\x1a\n")
	be := &fakeBackend{fn: fn}
	opts.Dirs, opts.Backend = []string{dir}, be
	if opts.Prefix == "" {
		opts.Prefix = "t"
	}
	return New(opts), be
}

func okBackend(_ context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
	switch method {
	case "backend.status":
		return jsontext.Value(`{"ok":true}`), nil
	case "notes.get":
		text, _ := json.Marshal("note " + string(params))
		return jsontext.Value(`{"text":` + string(text) + `,"mimeType":"text/markdown"}`), nil
	case "notes.complete":
		return jsontext.Value(`["3f","3a"]`), nil
	case "notes.tones":
		return jsontext.Value(`{"values":["kind","curt"],"total":7,"hasMore":true}`), nil
	}
	return nil, &socketclient.RPCError{Code: -32601, Message: "method not found"}
}

func TestContentIsServedInOrder(t *testing.T) {
	r, _ := contentRegistry(t, Options{}, map[string]string{"a.json": notesContent}, okBackend)
	snap := r.Snapshot()
	if len(snap.Problems) > 0 {
		t.Fatalf("problems:\n%s", problemStrings(snap.Problems))
	}
	var uris []string
	for _, res := range r.Resources().Resources() {
		uris = append(uris, res.URI)
	}
	if want := []string{"tairseach://status", "tairseach://log", "tairseach://motd", "tairseach://picture"}; !cmp.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	if got := r.Resources().Templates(); len(got) != 1 || got[0].URITemplate != "tairseach://notes/{id}" || got[0].Name != "note" {
		t.Errorf("templates %+v", got)
	}
	prompts := r.Prompts().Prompts()
	if len(prompts) != 2 || prompts[0].Name != "t_notes_review" || prompts[0].Title != "Review" || !prompts[0].Arguments[0].Required || prompts[1].Name != "t_status" {
		t.Errorf("prompts %+v", prompts)
	}
	if res := r.Resources().Resources()[0]; res.Title != "Status" || res.Annotations == nil || *res.Annotations.Priority != 1 {
		t.Errorf("status resource %+v", res)
	}
}

func TestReadResource(t *testing.T) {
	r, be := contentRegistry(t, Options{}, map[string]string{"a.json": notesContent}, okBackend)
	for _, tt := range []struct {
		uri  string
		want protocol.ResourceContents
	}{
		{"tairseach://motd", protocol.ResourceContents{URI: "tairseach://motd", MIMEType: "text/markdown", Text: "hello"}},
		// The last 16 bytes, from the first whole line.
		{"tairseach://log", protocol.ResourceContents{URI: "tairseach://log", MIMEType: "text/plain", Text: "third\n"}},
		{"tairseach://picture", protocol.ResourceContents{URI: "tairseach://picture", MIMEType: "image/png", Blob: []byte("\x89PNG\r\n\x1a\n")}},
		// An object is JSON text.
		{"tairseach://status", protocol.ResourceContents{URI: "tairseach://status", MIMEType: "application/json", Text: `{"ok":true}`}},
		// A template: its fixed params and the variable, decoded.
		{"tairseach://notes/3f", protocol.ResourceContents{URI: "tairseach://notes/3f", MIMEType: "text/markdown", Text: `note {"full":true,"id":"3f"}`}},
	} {
		res, err := r.ReadResource(t.Context(), aCall(), &protocol.ReadResourceRequest{URI: tt.uri})
		if err != nil {
			t.Errorf("%s: %v", tt.uri, err)
			continue
		}
		if d := cmp.Diff([]protocol.ResourceContents{tt.want}, textOf(res.Contents)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.uri, d)
		}
	}
	if got, want := be.recorded(), []string{"backend.status {}", `notes.get {"full":true,"id":"3f"}`}; !cmp.Equal(got, want) {
		t.Errorf("backend calls %q, want %q", got, want)
	}
}

func TestReadResourceErrors(t *testing.T) {
	failing := func(_ context.Context, method string, _ jsontext.Value) (jsontext.Value, error) {
		switch method {
		case "backend.status":
			return nil, &socketclient.RPCError{Code: -32011, Message: "Permission denied", Data: jsontext.Value(`{"reason":"no"}`)}
		case "notes.get":
			return nil, fmt.Errorf("%w: dial: connection refused", socketclient.ErrUnavailable)
		}
		return nil, errors.New("unexpected")
	}
	r, be := contentRegistry(t, Options{BackendAddr: "/x.sock"}, map[string]string{"a.json": notesContent}, failing)
	for _, tt := range []struct {
		uri  string
		code int64
		msg  string
	}{
		{"tairseach://nothing", protocol.CodeResourceNotFound, "resource not found: tairseach://nothing"},
		{"tairseach://notes/", protocol.CodeResourceNotFound, "resource not found"},
		{"tairseach://notes/XYZ", protocol.CodeInvalidParams, "the URI does not fit tairseach://notes/{id}; nothing was sent to the backend:\n- variables.id: does not match pattern"},
		{"tairseach://status", protocol.CodeInternalError, "The backend returned error -32011 for backend.status: Permission denied\nDetails: {\"reason\":\"no\"}"},
		{"tairseach://notes/3f", protocol.CodeInternalError, "The Tairseach backend is not reachable (backend unavailable: dial: connection refused). Start it, then read the resource again."},
	} {
		_, err := r.ReadResource(t.Context(), aCall(), &protocol.ReadResourceRequest{URI: tt.uri})
		if we := protocol.WireError(err); err == nil || we.Code != tt.code || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v (code %d), want code %d with %q", tt.uri, err, we.Code, tt.code, tt.msg)
		}
	}
	if got := be.recorded(); len(got) != 2 {
		t.Errorf("backend calls %q: only the status and the valid note were sent", got)
	}
	// A file that does not exist (yet): the resource is not found.
	os.Remove(filepath.Join(r.opts.Dirs[0], "log.txt"))
	if _, err := r.ReadResource(t.Context(), aCall(), &protocol.ReadResourceRequest{URI: "tairseach://log"}); !errors.Is(err, protocol.ErrResourceNotFound) || !strings.Contains(err.Error(), "log.txt does not exist") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestReadResourceIsBoundedByTheCallTimeout(t *testing.T) {
	hang := func(ctx context.Context, _ string, _ jsontext.Value) (jsontext.Value, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r, _ := contentRegistry(t, Options{CallTimeout: 10 * time.Millisecond}, map[string]string{"a.json": notesContent}, hang)
	_, err := r.ReadResource(t.Context(), aCall(), &protocol.ReadResourceRequest{URI: "tairseach://status"})
	if protocol.WireError(err).Code != protocol.CodeInternalError || !strings.Contains(err.Error(), "did not answer backend.status within 10ms") {
		t.Errorf("err = %v", err)
	}
}

// textOf returns contents with their text in Text, however it was read.
func textOf(cs []protocol.ResourceContents) []protocol.ResourceContents {
	out := slices.Clone(cs)
	for i, c := range out {
		if c.TextBytes != nil {
			out[i].Text, out[i].TextBytes = string(c.TextBytes), nil
		}
	}
	return out
}

func TestBackendResultsMapToContents(t *testing.T) {
	for _, tt := range []struct {
		result string
		want   protocol.ResourceContents
		err    string
	}{
		{`"plain"`, protocol.ResourceContents{MIMEType: "text/x-declared", Text: "plain"}, ""},
		{`[1,2]`, protocol.ResourceContents{MIMEType: "application/json", Text: "[1,2]"}, ""},
		{`null`, protocol.ResourceContents{MIMEType: "application/json", Text: "null"}, ""},
		{`{"text":"t"}`, protocol.ResourceContents{MIMEType: "text/x-declared", Text: "t"}, ""},
		{`{"text":"t","mimeType":"text/csv"}`, protocol.ResourceContents{MIMEType: "text/csv", Text: "t"}, ""},
		{`{"blob":"aGk=","mimeType":"image/png"}`, protocol.ResourceContents{MIMEType: "image/png", Blob: []byte("hi")}, ""},
		// Not the shape: other members, both, or a non-string.
		{`{"text":"t","size":1}`, protocol.ResourceContents{MIMEType: "application/json", Text: `{"text":"t","size":1}`}, ""},
		{`{"text":"t","blob":"aGk="}`, protocol.ResourceContents{MIMEType: "application/json", Text: `{"text":"t","blob":"aGk="}`}, ""},
		{`{"text":5}`, protocol.ResourceContents{MIMEType: "application/json", Text: `{"text":5}`}, ""},
		{`{"blob":"not base64!"}`, protocol.ResourceContents{}, "its blob is not base64"},
	} {
		got, err := resultContents("u:x", "text/x-declared", jsontext.Value(tt.result))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.result, err, tt.err)
			}
			continue
		}
		tt.want.URI = "u:x"
		if d := cmp.Diff(tt.want, textOf([]protocol.ResourceContents{got})[0]); err != nil || d != "" {
			t.Errorf("%s: %v (-want +got):\n%s", tt.result, err, d)
		}
	}
}

func TestGetPrompt(t *testing.T) {
	r, _ := contentRegistry(t, Options{}, map[string]string{"a.json": notesContent}, okBackend)
	res, err := r.GetPrompt(t.Context(), aCall(), &protocol.GetPromptRequest{Name: "t_notes_review", Arguments: map[string]string{"id": "3f"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	want := `{"description":"Review a note.","messages":[{"role":"user","content":{"type":"text","text":"Review note 3f, ."}},` +
		`{"role":"user","content":{"type":"resource","resource":{"uri":"tairseach://notes/3f","mimeType":"text/markdown","text":"note {\"full\":true,\"id\":\"3f\"}"}}}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// A URI given whole by an argument is read like any other.
	res, err = r.GetPrompt(t.Context(), aCall(), &protocol.GetPromptRequest{Name: "t_status", Arguments: map[string]string{"uri": "tairseach://motd"}})
	if err != nil || len(res.Messages) != 1 || textOf([]protocol.ResourceContents{*res.Messages[0].Resource})[0].Text != "hello" || res.Messages[0].Role != "assistant" {
		t.Errorf("status prompt: %+v, %v", res, err)
	}
	for _, tt := range []struct {
		name string
		args map[string]string
		msg  string
	}{
		{"t_nothing", nil, `unknown prompt "t_nothing"`},
		{"t_notes_review", nil, `prompt t_notes_review needs argument "id"`},
		{"t_notes_review", map[string]string{"id": ""}, `prompt t_notes_review needs argument "id"`},
		{"t_notes_review", map[string]string{"id": "3f", "mood": "x"}, `prompt t_notes_review has no argument "mood" (it has id, tone)`},
		{"t_notes_review", map[string]string{"id": "no!"}, "prompt t_notes_review embeds tairseach://notes/no!: the URI does not fit"},
		{"t_status", map[string]string{"uri": "tairseach://nothing"}, "prompt t_status embeds tairseach://nothing: resource not found"},
	} {
		_, err := r.GetPrompt(t.Context(), aCall(), &protocol.GetPromptRequest{Name: tt.name, Arguments: tt.args})
		if !errors.Is(err, protocol.ErrInvalidParams) || !strings.Contains(protocol.WireError(err).Message, tt.msg) {
			t.Errorf("%s %v: %v, want -32602 with %q", tt.name, tt.args, err, tt.msg)
		}
	}
}

func TestComplete(t *testing.T) {
	r, be := contentRegistry(t, Options{}, map[string]string{"a.json": notesContent}, okBackend)
	for _, tt := range []struct {
		req  protocol.CompleteRequest
		want protocol.CompleteResult
	}{
		{protocol.CompleteRequest{URI: "tairseach://notes/{id}", Argument: "id", Value: "3"}, protocol.CompleteResult{Values: []string{"3f", "3a"}}},
		{protocol.CompleteRequest{Prompt: "t_notes_review", Argument: "tone", Value: "", Context: map[string]string{"id": "3f"}},
			protocol.CompleteResult{Values: []string{"kind", "curt"}, Total: 7, HasMore: true}},
		{protocol.CompleteRequest{Prompt: "t_status", Argument: "uri", Value: "t"}, protocol.CompleteResult{}},
		{protocol.CompleteRequest{URI: "tairseach://motd", Argument: "x"}, protocol.CompleteResult{}},
	} {
		got, err := r.Complete(t.Context(), aCall(), &tt.req)
		if err != nil || !cmp.Equal(*got, tt.want) {
			t.Errorf("%+v: %+v, %v; want %+v", tt.req, got, err, tt.want)
		}
	}
	want := []string{`notes.complete {"argument":"id","value":"3"}`, `notes.tones {"argument":"tone","value":"","arguments":{"id":"3f"}}`}
	if got := be.recorded(); !cmp.Equal(got, want) {
		t.Errorf("backend calls %q, want %q", got, want)
	}
	for _, req := range []protocol.CompleteRequest{
		{Prompt: "t_nothing", Argument: "id"},
		{Prompt: "t_notes_review", Argument: "mood"},
		{URI: "tairseach://other/{id}", Argument: "id"},
	} {
		if _, err := r.Complete(t.Context(), aCall(), &req); !errors.Is(err, protocol.ErrInvalidParams) {
			t.Errorf("%+v: %v, want -32602", req, err)
		}
	}
	bad, _ := contentRegistry(t, Options{}, map[string]string{"a.json": notesContent}, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return jsontext.Value(`[1,2]`), nil
	})
	_, err := bad.Complete(t.Context(), aCall(), &protocol.CompleteRequest{URI: "tairseach://notes/{id}", Argument: "id"})
	if protocol.WireError(err).Code != protocol.CodeInternalError || !strings.Contains(err.Error(), "is not a completion") {
		t.Errorf("a result of numbers: %v", err)
	}
}

func unservedContent(s *Snapshot) []string {
	var out []string
	for _, u := range s.UnservedContent {
		out = append(out, fmt.Sprintf("%s %s %s: %s (filtered %v)", u.Kind, u.Name, filepath.Base(u.File), u.Reason, u.Filtered))
	}
	return out
}

// A URI, URI template or prompt name claimed twice is served once, from
// the first file in order, whatever the order of loading; the second is
// an error that names the first.
func TestContentConflictsAreDeterministic(t *testing.T) {
	second := `{"id":"b","tools":[],
	  "resources":[{"uri":"tairseach://motd","name":"motd","description":"Another.","text":"bye"}],
	  "resourceTemplates":[{"uriTemplate":"tairseach://notes/{id}","name":"note","description":"Another.","method":"m"}],
	  "prompts":[{"name":"notes_review","description":"Another.","messages":[{"role":"user","text":"hi"}]}],
	  "implementation":{"methods":{"m":"m"}}}`
	r, _ := contentRegistry(t, Options{}, map[string]string{"a.json": notesContent, "b.json": second}, okBackend)
	for range 2 {
		snap := r.Reload()
		want := []string{
			`resource tairseach://motd b.json: URI already used by ` + snap.Resources[2].origin() + ` (filtered false)`,
			`resourceTemplate tairseach://notes/{id} b.json: URI template already used by ` + snap.Templates[0].origin() + ` (filtered false)`,
			`prompt t_notes_review b.json: client name already used by ` + snap.Prompts[0].origin() + ` (prompt "notes.review") (filtered false)`,
		}
		if d := cmp.Diff(want, unservedContent(snap)); d != "" {
			t.Errorf("unserved (-want +got):\n%s", d)
		}
		var errs []string
		for _, p := range snap.Problems {
			if p.Severity.String() == "error" {
				errs = append(errs, p.Path+" "+p.Resource+p.Prompt)
			}
		}
		if want := []string{"resources[0].uri tairseach://motd", "resourceTemplates[0].uriTemplate tairseach://notes/{id}", "prompts[0].name notes_review"}; !cmp.Equal(errs, want) {
			t.Errorf("errors %q, want %q", errs, want)
		}
		if res, err := r.ReadResource(t.Context(), aCall(), &protocol.ReadResourceRequest{URI: "tairseach://motd"}); err != nil || textOf(res.Contents)[0].Text != "hello" {
			t.Errorf("the first file's motd is not the one served: %+v %v", res, err)
		}
	}
}

func TestAPromptEmbeddingWhatClientsCannotReadIsNotServed(t *testing.T) {
	data := `{"id":"p","tools":[],
	  "resources":[{"uri":"tairseach://secret","name":"secret","description":"S.","text":"s"}],
	  "prompts":[
	    {"name":"lost","description":"L.","arguments":[{"name":"id"}],"messages":[{"role":"user","resource":"tairseach://nowhere/{id}"}]},
	    {"name":"hidden","description":"H.","messages":[{"role":"user","resource":"tairseach://secret"}]}]}`
	r, _ := contentRegistry(t, Options{Filter: Filter{Exclude: []string{"tairseach://secret"}}}, map[string]string{"p.json": data}, okBackend)
	snap := r.Snapshot()
	want := []string{
		"resource tairseach://secret p.json: filtered out by the exclude pattern \"tairseach://secret\" (filtered true)",
		"prompt t_lost p.json: embeds tairseach://nowhere/{id}, which clients cannot read (filtered false)",
		"prompt t_hidden p.json: embeds tairseach://secret, which clients cannot read (filtered true)",
	}
	if d := cmp.Diff(want, unservedContent(snap)); d != "" {
		t.Errorf("unserved (-want +got):\n%s", d)
	}
	if !strings.Contains(problemStrings(snap.Problems), "p.json:prompts[0].messages: error: embeds tairseach://nowhere/{id}, which no resource or template of the manifests serves") ||
		strings.Contains(problemStrings(snap.Problems), "prompts[1]") {
		t.Errorf("problems:\n%s", problemStrings(snap.Problems))
	}
}

func TestFiltersApplyToContent(t *testing.T) {
	served := func(r *Registry) string {
		s := r.Snapshot()
		var out []string
		for _, e := range s.Resources {
			out = append(out, e.Resource.URI)
		}
		for _, e := range s.Templates {
			out = append(out, e.Template.URITemplate)
		}
		for _, e := range s.Prompts {
			out = append(out, e.Name)
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct {
		name   string
		filter Filter
		want   string
	}{
		{"no filter", Filter{}, "tairseach://status tairseach://log tairseach://motd tairseach://picture tairseach://notes/{id} t_notes_review t_status"},
		{"exclude by URI or name", Filter{Exclude: []string{"tairseach://log", "picture", "t_status"}},
			"tairseach://status tairseach://motd tairseach://notes/{id} t_notes_review"},
		// The review prompt embeds notes, which the include leaves out.
		{"include by manifest name", Filter{Include: []string{"notes.*", "tairseach://motd"}}, "tairseach://motd"},
		// status's method is no read-only tool's; files, text and prompts
		// change nothing; the completions' methods are no tool's.
		{"read-only", Filter{ReadOnly: true}, "tairseach://log tairseach://motd tairseach://picture tairseach://notes/{id} t_notes_review t_status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := contentRegistry(t, Options{Filter: tt.filter}, map[string]string{"a.json": notesContent}, okBackend)
			if got := served(r); got != tt.want {
				t.Errorf("served %s\nwant   %s", got, tt.want)
			}
			if tt.filter.ReadOnly {
				got, err := r.Complete(t.Context(), aCall(), &protocol.CompleteRequest{Prompt: "t_notes_review", Argument: "id", Value: "3"})
				if err != nil || len(got.Values) != 0 {
					t.Errorf("a completion whose method no read-only tool has was called: %+v %v", got, err)
				}
			}
		})
	}
}

// Each reload says which lists changed; a list that did not keeps its
// set, so that clients' cursors stay valid.
func TestChangesArePerList(t *testing.T) {
	var changes []Changes
	r, _ := contentRegistry(t, Options{OnChange: func(_ *Snapshot, c Changes) { changes = append(changes, c) }}, map[string]string{"a.json": notesContent}, okBackend)
	path := filepath.Join(r.opts.Dirs[0], "a.json")
	for _, st := range []struct {
		name, from, to string
		want           []Changes
	}{
		{"a resource's description", `"description":"Motd."`, `"description":"Message of the day."`, []Changes{{Resources: true}}},
		{"a template's title", `"name":"note",`, `"name":"note","title":"Note",`, []Changes{{Resources: true}}},
		{"a prompt's argument", `{"name":"tone"}`, `{"name":"tone","description":"How."}`, []Changes{{Prompts: true}}},
		{"a tool", `"description":"Get."`, `"description":"Get one."`, []Changes{{Tools: true}}},
		{"what clients do not see", `"file":"log.txt"`, `"file":"./log.txt"`, nil},
	} {
		before := r.Snapshot()
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), st.from) {
			t.Fatalf("%s: %q not in the manifest", st.name, st.from)
		}
		writeFile(t, path, strings.Replace(string(data), st.from, st.to, 1))
		changes = nil
		after := r.Reload()
		if !cmp.Equal(changes, st.want) {
			t.Errorf("%s: changes %+v, want %+v", st.name, changes, st.want)
		}
		var c Changes
		if len(st.want) > 0 {
			c = st.want[0]
		}
		if !c.Tools && after.Tools() != before.Tools() || !c.Resources && after.ResourceSet() != before.ResourceSet() ||
			!c.Prompts && after.PromptSet() != before.PromptSet() {
			t.Errorf("%s: a set that did not change was replaced", st.name)
		}
	}
}

// Watching, an edit to a manifest's prompts or resources alone is
// published, and says what changed.
func TestWatchPublishesContentChanges(t *testing.T) {
	dir := t.TempDir()
	r, changes := watchRegistry(t, dir)
	path := filepath.Join(dir, "p.json")
	prompt := func(text string) string {
		return `{"id":"p","tools":[],"prompts":[{"name":"hello","description":"H.","messages":[{"role":"user","text":"` + text + `"}]}]}`
	}
	writeFile(t, path, prompt("hi"))
	waitChange(t, changes, func(string) bool { return len(r.Snapshot().Prompts) == 1 })
	before := r.Snapshot().PromptSet()
	// A message's text is not part of the list: nothing to announce.
	writeFile(t, path, prompt("hello"))
	writeFile(t, path, strings.Replace(prompt("hello"), `"description":"H."`, `"description":"Says hello."`, 1))
	waitChange(t, changes, func(string) bool { return r.Snapshot().PromptSet() != before })
	if got := r.Prompts().Prompts()[0].Description; got != "Says hello." {
		t.Errorf("description %q", got)
	}
}

// Reads and prompts are recorded in the audit log like calls: who, what,
// how it went, a template's variables and a prompt's arguments as their
// arguments, values only with AuditValues.
func TestReadsAndPromptsAreRecorded(t *testing.T) {
	failing := func(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
		if method == "backend.status" {
			return nil, &socketclient.RPCError{Code: -32011, Message: "Permission denied"}
		}
		return okBackend(ctx, method, params)
	}
	rec := &recorder{}
	r, _ := contentRegistry(t, Options{Audit: rec, AuditValues: true, Filter: Filter{Exclude: []string{"tairseach://motd"}}},
		map[string]string{"a.json": notesContent}, failing)
	reader := protocol.NewCall(protocol.CallOptions{ProtocolVersion: "2025-11-25", Client: protocol.ClientInfo{Name: "c", Version: "1"}, SessionID: "s", Transport: "stdio"})
	for _, uri := range []string{"tairseach://notes/3f", "tairseach://status", "tairseach://notes/XX", "tairseach://nothing", "tairseach://motd"} {
		r.ReadResource(t.Context(), reader, &protocol.ReadResourceRequest{URI: uri})
	}
	prompter := protocol.NewCall(protocol.CallOptions{Transport: "stdio"})
	r.GetPrompt(t.Context(), prompter, &protocol.GetPromptRequest{Name: "t_notes_review", Arguments: map[string]string{"id": "3f", "tone": "kind"}})
	r.GetPrompt(t.Context(), prompter, &protocol.GetPromptRequest{Name: "t_notes_review"})
	type line struct {
		Kind, Name, ManifestName, Method, Outcome string
		Code                                      *int64
		Keys                                      []string
		Args                                      string
	}
	var got []line
	for _, e := range rec.take() {
		if e.Transport != "stdio" || e.Kind == "resource" && (e.Client != "c" || e.Session != "s" || e.ProtocolVersion != "2025-11-25") {
			t.Errorf("who is not recorded: %+v", e)
		}
		got = append(got, line{e.Kind, e.Name, e.ManifestName, e.Method, e.Outcome, e.Code, e.ArgKeys, string(e.Args)})
	}
	code := int64(-32011)
	want := []line{
		{"resource", "tairseach://notes/3f", "tairseach://notes/{id}", "notes.get", "ok", nil, []string{"id"}, `{"id":"3f"}`},
		{"resource", "tairseach://status", "", "backend.status", "backend_error", &code, nil, ""},
		{"resource", "tairseach://notes/XX", "tairseach://notes/{id}", "notes.get", "invalid_arguments", nil, []string{"id"}, `{"id":"XX"}`},
		{"resource", "tairseach://nothing", "", "", "not_found", nil, nil, ""},
		{"resource", "tairseach://motd", "", "", "refused", nil, nil, ""},
		{"prompt", "t_notes_review", "notes.review", "", "ok", nil, []string{"id", "tone"}, `{"id":"3f","tone":"kind"}`},
		{"prompt", "t_notes_review", "notes.review", "", "invalid_arguments", nil, nil, "{}"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("audit entries (-want +got):\n%s", d)
	}
}
