package main

// End-to-end tests of resources, resource templates, prompts and
// completions: the built binary, driven by the official Go SDK client and
// by raw sessions whose every line is checked against the version's schema.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// contentManifest declares a resource of each kind, a template with a
// completion, and two prompts, one embedding the template.
const contentManifest = `{
  "id": "content",
  "tools": [{"name": "notes.get", "description": "Get a note.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}],
  "resources": [
    {"uri": "tairseach://status", "name": "status", "title": "Status", "description": "Backend status.", "mimeType": "application/json", "method": "backend.status"},
    {"uri": "tairseach://log", "name": "log", "description": "The log's tail.", "file": "log.txt", "maxBytes": 12},
    {"uri": "tairseach://motd", "name": "motd", "description": "Message of the day.", "text": "Hello."}
  ],
  "resourceTemplates": [
    {"uriTemplate": "tairseach://notes/{id}", "name": "note", "title": "Note", "description": "A note by id.", "mimeType": "application/json",
     "method": "notes.get", "schema": {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[0-9a-z ]+$"}}},
     "complete": {"id": "notes.complete"}}
  ],
  "prompts": [
    {"name": "notes.review", "title": "Review", "description": "Review a note.", "arguments": [{"name": "id", "description": "Note id.", "required": true}],
     "messages": [{"role": "user", "text": "Review note {id}:"}, {"role": "user", "resource": "tairseach://notes/{id}"}],
     "complete": {"id": "notes.complete"}},
    {"name": "motd", "description": "Today's message.", "messages": [{"role": "assistant", "resource": "tairseach://motd"}]}
  ],
  "implementation": {"methods": {"notes.get": "notes.get", "status": "backend.status", "complete": "notes.complete"}}
}`

func contentBackend(t *testing.T) *sockettest.Server {
	t.Helper()
	return sockettest.NewServer(t, func(_ context.Context, req sockettest.Request) (any, error) {
		switch req.Method {
		case "backend.status":
			return map[string]any{"status": "ok"}, nil
		case "notes.get":
			var p struct{ ID string }
			_ = json.Unmarshal(req.Params, &p)
			if p.ID == "missing" {
				return nil, &sockettest.Error{Code: -32004, Message: "note not found"}
			}
			return map[string]any{"id": p.ID, "title": "groceries"}, nil
		case "notes.complete":
			var p struct{ Argument, Value string }
			_ = json.Unmarshal(req.Params, &p)
			return []string{p.Value + "1", p.Value + "2"}, nil
		}
		return nil, &sockettest.Error{Code: -32601, Message: "method not found"}
	})
}

func contentDir(t *testing.T) string {
	dir := manifestDir(t, map[string]string{"content.json": contentManifest})
	if err := os.WriteFile(filepath.Join(dir, "log.txt"), []byte("old line\nnew line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGoSDKClientReadsResourcesAndGetsPrompts(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct{ name, version, want string }{
		{"2025-06-18", "2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25", "2025-11-25"},
		{"default mode probes server/discover and stays modern", "", "2026-07-28"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			be := contentBackend(t)
			cs := connectSDK(t, bridgeCmd(contentDir(t), be.Path), mode.version, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != mode.want {
				t.Errorf("negotiated %s, want %s", got, mode.want)
			}
			caps := cs.InitializeResult().Capabilities
			if caps.Completions == nil || caps.Resources == nil || !caps.Resources.ListChanged || caps.Resources.Subscribe || caps.Prompts == nil || !caps.Prompts.ListChanged {
				t.Errorf("capabilities %+v, resources %+v, prompts %+v", caps, caps.Resources, caps.Prompts)
			}
			ctx := t.Context()

			resources, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatalf("ListResources: %v", err)
			}
			var uris []string
			for _, r := range resources.Resources {
				uris = append(uris, r.URI)
			}
			if want := []string{"tairseach://status", "tairseach://log", "tairseach://motd"}; !slices.Equal(uris, want) {
				t.Errorf("resources %v, want %v", uris, want)
			}
			if r := resources.Resources[0]; r.Title != "Status" || r.MIMEType != "application/json" {
				t.Errorf("status resource %+v", r)
			}
			for uri, want := range map[string]string{
				"tairseach://status": `{"status":"ok"}`,
				"tairseach://log":    "new line\n",
				"tairseach://motd":   "Hello.",
			} {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != want || res.Contents[0].URI != uri {
					t.Errorf("read %s: %+v, %v; want %q", uri, res, err, want)
				}
			}

			// Expand the template as a client does, then read the URI.
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(templates.ResourceTemplates) != 1 {
				t.Fatalf("ListResourceTemplates: %+v, %v", templates, err)
			}
			tpl := templates.ResourceTemplates[0]
			uri := strings.Replace(tpl.URITemplate, "{id}", url.PathEscape("a b"), 1)
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil || res.Contents[0].Text != `{"id":"a b","title":"groceries"}` || res.Contents[0].MIMEType != "application/json" {
				t.Errorf("read %s: %+v, %v", uri, res, err)
			}
			for uri, want := range map[string]string{
				"tairseach://nothing":       "resource not found",
				"tairseach://notes/BAD":     "does not match pattern",
				"tairseach://notes/missing": "The backend returned error -32004 for notes.get: note not found",
			} {
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("read %s: err %v, want %q", uri, err, want)
				}
			}

			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(prompts.Prompts) != 2 || prompts.Prompts[0].Name != "tairseach_notes_review" || !prompts.Prompts[0].Arguments[0].Required {
				t.Fatalf("ListPrompts: %+v, %v", prompts, err)
			}
			got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tairseach_notes_review", Arguments: map[string]string{"id": "n1"}})
			if err != nil || len(got.Messages) != 2 {
				t.Fatalf("GetPrompt: %+v, %v", got, err)
			}
			if tc, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Review note n1:" {
				t.Errorf("first message %+v", got.Messages[0].Content)
			}
			if er, ok := got.Messages[1].Content.(*mcp.EmbeddedResource); !ok || er.Resource.URI != "tairseach://notes/n1" || !strings.Contains(er.Resource.Text, `"id":"n1"`) {
				t.Errorf("embedded resource %+v", got.Messages[1].Content)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tairseach_notes_review"}); err == nil || !strings.Contains(err.Error(), `needs argument "id"`) {
				t.Errorf("a missing argument: %v", err)
			}

			for _, ref := range []*mcp.CompleteReference{
				{Type: "ref/prompt", Name: "tairseach_notes_review"},
				{Type: "ref/resource", URI: "tairseach://notes/{id}"},
			} {
				c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "n"}})
				if err != nil || !slices.Equal(c.Completion.Values, []string{"n1", "n2"}) {
					t.Errorf("complete %+v: %+v, %v", ref, c, err)
				}
			}
		})
	}
}

// Editing a manifest's prompts or resources tells clients, each list with
// its own notification, in both eras (subscriptions/listen in the modern
// one); only what changed is announced.
func TestGoSDKClientSeesPromptAndResourceChanges(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			be := contentBackend(t)
			dir := contentDir(t)
			prompts, resources := make(chan struct{}, 10), make(chan struct{}, 10)
			opts := &mcp.ClientOptions{
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts <- struct{}{} },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- struct{}{} },
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: bridgeCmd(dir, be.Path)}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListPrompts(ctx, nil); err != nil {
				t.Fatal(err)
			}
			edit := func(from, to string) {
				t.Helper()
				path := filepath.Join(dir, "content.json")
				data, _ := os.ReadFile(path)
				if err := os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wait := func(ch chan struct{}, what string) {
				t.Helper()
				select {
				case <-ch:
				case <-ctx.Done():
					t.Fatalf("no %s list_changed", what)
				}
			}
			edit(`"description": "Today's message."`, `"description": "The message of the day."`)
			wait(prompts, "prompts")
			list, err := cs.ListPrompts(ctx, nil)
			if err != nil || list.Prompts[1].Description != "The message of the day." {
				t.Errorf("prompts after the edit: %+v, %v", list, err)
			}
			edit(`"name": "motd", "description": "Message of the day."`, `"name": "motd", "description": "Greeting."`)
			wait(resources, "resources")
			select {
			case <-prompts:
				t.Error("prompts/list_changed for an edit of a resource")
			default:
			}
		})
	}
}

func TestEveryContentLineIsAValidMessage(t *testing.T) {
	t.Parallel()
	be := contentBackend(t)
	dir := contentDir(t)
	requests := []string{
		`"method":"resources/list"`,
		`"method":"resources/templates/list"`,
		`"method":"resources/read","params":{"uri":"tairseach://status"`,
		`"method":"resources/read","params":{"uri":"tairseach://log"`,
		`"method":"resources/read","params":{"uri":"tairseach://notes/x"`,
		`"method":"resources/read","params":{"uri":"tairseach://nothing"`,
		`"method":"resources/read","params":{"uri":"tairseach://notes/missing"`,
		`"method":"prompts/list"`,
		`"method":"prompts/get","params":{"name":"tairseach_notes_review","arguments":{"id":"x"}`,
		`"method":"prompts/get","params":{"name":"tairseach_motd"`,
		`"method":"prompts/get","params":{"name":"tairseach_notes_review"`,
		`"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"tairseach_notes_review"},"argument":{"name":"id","value":"a"}`,
	}
	// line makes request i of requests, whose params (when it has some)
	// are closed here, with meta in them.
	line := func(i int, req, meta string) string {
		id := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, i+1)
		switch {
		case strings.Contains(req, `"params":{`) && meta != "":
			return id + req + "," + meta + "}}"
		case strings.Contains(req, `"params":{`):
			return id + req + "}}"
		case meta != "":
			return id + req + `,"params":{` + meta + "}}"
		}
		return id + req + "}"
	}
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var lines []string
			meta := ""
			if version == "2026-07-28" {
				meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
				lines = append(lines, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{`+meta+`}}`)
			} else {
				lines = append(lines, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
			}
			for i, req := range requests {
				lines = append(lines, line(i, req, meta))
			}
			out, stderr, code := rawSession(t, bridgeCmd(dir, be.Path), version, lines...)
			if code != 0 || len(out) != len(lines) {
				t.Errorf("exit %d, %d lines for %d requests:\n%s\nstderr:\n%s", code, len(out), len(lines), strings.Join(out, "\n"), stderr)
			}
		})
	}
}

// Over Streamable HTTP, in both eras, a client reads resources, gets a
// prompt that embeds one, completes an argument and hears of prompt
// changes.
func TestGoSDKClientReadsResourcesOverHTTP(t *testing.T) {
	t.Parallel()
	be := contentBackend(t)
	dir := contentDir(t)
	b := startHTTPBridge(t, dir, be.Path)
	changed := map[string]chan struct{}{"2025-11-25": make(chan struct{}, 10), "2026-07-28": make(chan struct{}, 10)}
	sessions := map[string]*mcp.ClientSession{}
	for version, ch := range changed {
		sessions[version] = connectHTTP(t, b.url, version, &mcp.ClientOptions{
			PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { ch <- struct{}{} },
		})
	}
	ctx := t.Context()
	for version, cs := range sessions {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://notes/n7"})
		if err != nil || res.Contents[0].Text != `{"id":"n7","title":"groceries"}` {
			t.Errorf("%s: read: %+v, %v", version, res, err)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://nothing"}); err == nil || !strings.Contains(err.Error(), "resource not found") {
			t.Errorf("%s: an unknown URI: %v", version, err)
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tairseach_motd"})
		if err != nil || len(got.Messages) != 1 {
			t.Fatalf("%s: prompt: %+v, %v", version, got, err)
		}
		if er, ok := got.Messages[0].Content.(*mcp.EmbeddedResource); !ok || er.Resource.Text != "Hello." {
			t.Errorf("%s: prompt's message %+v", version, got.Messages[0].Content)
		}
		c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tairseach://notes/{id}"},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: "x"}})
		if err != nil || !slices.Equal(c.Completion.Values, []string{"x1", "x2"}) {
			t.Errorf("%s: complete: %+v, %v", version, c, err)
		}
	}
	path := filepath.Join(dir, "content.json")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `"Today's message."`, `"Greeting."`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for version, ch := range changed {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: no prompts/list_changed over HTTP", version)
		}
	}
}
