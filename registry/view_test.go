package registry

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

func echoBackend(_ context.Context, _ string, p jsontext.Value) (jsontext.Value, error) {
	return p, nil
}

// A policy only narrows: its includes intersect with the registry's, its
// excludes and read-only add to them, and what it keeps out is refused
// as a filtered tool is, saying whose policy it is.
func TestAPolicyNarrowsWhatAClientSees(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mail.json"), filterManifest)
	writeFile(t, filepath.Join(dir, "notes.json"), manifestJSON("notes", "notes.create", "notes.list"))
	for _, tc := range []struct {
		name           string
		bridge, policy Filter
		served         string
		reasons        map[string]string
	}{
		{"no policy of its own: the bridge's filter", Filter{Exclude: []string{"notes.list"}}, Filter{},
			"t_mail_search,t_mail_send,t_mail_delete,t_notes_create", nil},
		{"includes intersect", Filter{Include: []string{"t_mail_*"}}, Filter{Include: []string{"*.search", "t_notes_*"}},
			"t_mail_search",
			map[string]string{
				"mail.send":    "filtered out: matched by no include pattern (the policy of client cursor)",
				"notes.create": "filtered out: matched by no include pattern",
			}},
		{"excludes add up", Filter{Exclude: []string{"mail.delete"}}, Filter{Exclude: []string{"notes.*"}},
			"t_mail_search,t_mail_send",
			map[string]string{"notes.list": `filtered out by the exclude pattern "notes.*" (the policy of client cursor)`}},
		{"read-only adds to the bridge's", Filter{}, Filter{ReadOnly: true},
			"t_mail_search",
			map[string]string{"mail.send": "filtered out as not read-only: its annotations do not say readOnlyHint: true (the policy of client cursor)"}},
		{"a policy cannot widen", Filter{ReadOnly: true}, Filter{Include: []string{"*"}},
			"t_mail_search", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			r := New(Options{Dirs: []string{dir}, Prefix: "t", Filter: tc.bridge, Backend: &fakeBackend{fn: echoBackend}, Audit: rec})
			v := r.View(&Policy{Client: "cursor", Filter: tc.policy})
			snap := v.Snapshot()
			if got := names(snap); got != tc.served {
				t.Errorf("served %s, want %s", got, tc.served)
			}
			if v.Tools().Len() != len(snap.Entries) {
				t.Errorf("the view lists %d tools, its snapshot serves %d", v.Tools().Len(), len(snap.Entries))
			}
			reasons := unservedReasons(snap)
			for tool, want := range tc.reasons {
				if reasons[tool] != want {
					t.Errorf("%s: reason %q, want %q", tool, reasons[tool], want)
				}
			}
			for _, e := range r.Snapshot().Entries {
				_, served := snap.Lookup(e.Name)
				res, err := v.CallTool(t.Context(), aCall(), request(e.Name, `{}`))
				switch {
				case served && (err != nil || res.IsError):
					t.Errorf("calling %s in the view: %v %+v", e.Name, err, res)
				case !served && !errors.Is(err, protocol.ErrInvalidParams):
					t.Errorf("calling %s, which the policy keeps out: %v, want invalid params", e.Name, err)
				}
			}
			for _, e := range rec.take() {
				if _, served := snap.Lookup(e.Name); !served && e.Outcome != "refused" {
					t.Errorf("%s, kept out by the policy: recorded %q, want refused", e.Name, e.Outcome)
				}
			}
		})
	}
}

// A policy's confirm patterns ask before more tools, whatever the
// bridge's --confirm; its deny refuses them for a client that cannot ask.
func TestAPolicyAddsToWhatAsksFirst(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mail.json"), filterManifest)
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Confirm: Confirm{Mode: ConfirmNever}, Backend: &fakeBackend{fn: echoBackend}})
	v := r.View(&Policy{Client: "script", Confirm: []string{"mail.s*"}, DenyUnasked: true})
	for _, tc := range []struct {
		tool    string
		asks    *ConfirmReason
		refused bool
	}{
		{"t_mail_search", &ConfirmReason{By: "policy", Pattern: "mail.s*"}, true},
		{"t_mail_send", &ConfirmReason{By: "policy", Pattern: "mail.s*"}, true},
		{"t_mail_delete", nil, false},
	} {
		e, _ := v.Snapshot().Lookup(tc.tool)
		if (e.Confirm == nil) != (tc.asks == nil) || e.Confirm != nil && *e.Confirm != *tc.asks {
			t.Errorf("%s asks first because %+v, want %+v", tc.tool, e.Confirm, tc.asks)
		}
		res, err := v.CallTool(t.Context(), aCall(), request(tc.tool, `{}`))
		if err != nil || res.IsError != tc.refused || tc.refused && !strings.Contains(resultText(res), "cannot ask") {
			t.Errorf("%s from a client that cannot ask: %v %q, want refused %v", tc.tool, err, resultText(res), tc.refused)
		}
		if res, _ := r.CallTool(t.Context(), aCall(), request(tc.tool, `{}`)); res.IsError {
			t.Errorf("%s without the policy: %q", tc.tool, resultText(res))
		}
	}
}

// Resources, templates, prompts and completions are narrowed like tools:
// read-only keeps out what calls a method no read-only tool has, and a
// prompt that embeds a resource the client cannot read.
func TestAPolicyNarrowsContent(t *testing.T) {
	r, _ := contentRegistry(t, Options{}, map[string]string{"a.json": notesContent}, okBackend)
	v := r.View(&Policy{Client: "cursor", Filter: Filter{ReadOnly: true, Exclude: []string{"tairseach://motd"}}})
	var uris []string
	for _, e := range v.Snapshot().Resources {
		uris = append(uris, e.Resource.URI)
	}
	if got := strings.Join(uris, " "); got != "tairseach://log tairseach://picture" {
		t.Errorf("resources %s: status calls a method no read-only tool has, motd is excluded", got)
	}
	if n := len(r.Snapshot().Resources); n != 4 {
		t.Errorf("the registry serves %d resources, want all 4", n)
	}
	_, err := v.ReadResource(t.Context(), aCall(), &protocol.ReadResourceRequest{URI: "tairseach://status"})
	if !errors.Is(err, protocol.ErrResourceNotFound) {
		t.Errorf("reading a resource the policy keeps out: %v", err)
	}
	if _, err := v.ReadResource(t.Context(), aCall(), &protocol.ReadResourceRequest{URI: "tairseach://notes/3f"}); err != nil {
		t.Errorf("reading through a template of a read-only method: %v", err)
	}
	if _, err := v.GetPrompt(t.Context(), aCall(), &protocol.GetPromptRequest{Name: "t_notes_review", Arguments: map[string]string{"id": "3f"}}); err != nil {
		t.Errorf("a prompt that embeds what the client may read: %v", err)
	}
	res, err := v.Complete(t.Context(), aCall(), &protocol.CompleteRequest{Prompt: "t_notes_review", Argument: "tone"})
	if err != nil || len(res.Values) != 0 {
		t.Errorf("a completion whose method no read-only tool has: %v %v, want none", res, err)
	}
	if a, b := len(v.Snapshot().Prompts), len(r.Snapshot().Prompts); a != b {
		t.Errorf("prompts: %d in the view, %d in the registry", a, b)
	}
}

// A view is built once per snapshot of the registry and per policy, and
// follows both: a reload, or a new policy, is served at the next request.
func TestAViewFollowsReloadsAndItsPolicy(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mail.json"), filterManifest)
	r := New(Options{Dirs: []string{dir}, Prefix: "t"})
	v := r.View(&Policy{Client: "cursor", Filter: Filter{Include: []string{"mail.*"}}})
	first := v.Snapshot()
	if v.Snapshot() != first || v.Tools() != first.Tools() {
		t.Error("a second request built the view again")
	}
	writeFile(t, filepath.Join(dir, "more.json"), manifestJSON("more", "mail.archive"))
	r.Reload()
	if got := names(v.Snapshot()); got != "t_mail_search,t_mail_send,t_mail_delete,t_mail_archive" {
		t.Errorf("after a reload: %s", got)
	}
	v.SetPolicy(&Policy{Client: "cursor", Filter: Filter{ReadOnly: true}})
	if got := names(v.Snapshot()); got != "t_mail_search" {
		t.Errorf("after a new policy: %s", got)
	}
	same := v.Tools()
	v.SetPolicy(&Policy{Client: "cursor", Filter: Filter{ReadOnly: true, Exclude: []string{"nothing"}}})
	if v.Tools() != same {
		t.Error("a policy that changes nothing a client sees changed its list (and its cursors)")
	}
}

// In search mode a client's view finds and calls only what it serves.
func TestSearchOverAView(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mail.json"), filterManifest)
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: &fakeBackend{fn: echoBackend}})
	s := NewSearch(r).Over(r.View(&Policy{Client: "cursor", Filter: Filter{ReadOnly: true}}))
	res, err := s.CallTool(t.Context(), aCall(), request("t_find_tools", `{"query":"mail"}`))
	if err != nil || !strings.Contains(resultText(res), "t_mail_search") || strings.Contains(resultText(res), "t_mail_send") {
		t.Errorf("find_tools in a read-only view: %v %s", err, resultText(res))
	}
	res, err = s.CallTool(t.Context(), aCall(), request("t_call_tool", `{"name":"t_mail_send","arguments":{}}`))
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "Unknown tool") {
		t.Errorf("call_tool of a tool the view keeps out: %v %s", err, resultText(res))
	}
	if ts := s.Tools().Tools(); len(ts) != 2 || ts[1].Annotations == nil || ts[1].Annotations.ReadOnlyHint == nil {
		t.Errorf("call_tool of a read-only view says readOnlyHint: %+v", ts)
	}
}

// What a client's view adds to a request once it is built: the lookup of
// the snapshot it built for the registry's current one (compare with
// the registry's own).
func BenchmarkViewTools(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, filepath.Join(dir, "mail.json"), filterManifest)
	r := New(Options{Dirs: []string{dir}, Prefix: "t"})
	v := r.View(&Policy{Client: "cursor", Filter: Filter{ReadOnly: true}})
	for _, bc := range []struct {
		name string
		p    protocol.ToolProvider
	}{{"the registry", r}, {"a client's view", v}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if bc.p.Tools() == nil {
					b.Fatal("no tools")
				}
			}
		})
	}
}
