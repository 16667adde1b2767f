package registry

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// filterManifest has read-only and writing mail tools, a hidden tool and
// one without a method mapping.
const filterManifest = `{"id":"mail","tools":[
 {"name":"mail.search","description":"Search mail.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"mail.send","description":"Send mail.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false}},
 {"name":"mail.delete","description":"Delete mail.","inputSchema":{"type":"object"}},
 {"name":"mail.reindex","description":"Hidden.","inputSchema":{"type":"object"},"mcpExpose":false},
 {"name":"mail.unmapped","description":"No method.","inputSchema":{"type":"object"}}
],"implementation":{"methods":{"mail.search":"mail.search","mail.send":"mail.send","mail.delete":"mail.delete","mail.reindex":"mail.reindex"}}}`

func unservedReasons(s *Snapshot) map[string]string {
	out := map[string]string{}
	for _, u := range s.Unserved {
		out[u.Tool] = u.Reason
	}
	return out
}

func TestFilters(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mail.json"), filterManifest)
	writeFile(t, filepath.Join(dir, "notes.json"), manifestJSON("notes", "notes.create", "notes.list"))
	always := map[string]string{
		"mail.reindex":  "hidden by mcpExpose: false",
		"mail.unmapped": "no method mapping in implementation.methods",
	}
	for _, tc := range []struct {
		name     string
		filter   Filter
		served   string
		filtered map[string]string
	}{
		{"no filter serves everything", Filter{},
			"t_mail_search,t_mail_send,t_mail_delete,t_notes_create,t_notes_list", nil},
		{"include by manifest name", Filter{Include: []string{"mail.*"}},
			"t_mail_search,t_mail_send,t_mail_delete",
			map[string]string{"notes.create": "filtered out: matched by no include pattern", "notes.list": "filtered out: matched by no include pattern"}},
		{"include by client name", Filter{Include: []string{"t_notes_*", "t_mail_s*"}},
			"t_mail_search,t_mail_send,t_notes_create,t_notes_list",
			map[string]string{"mail.delete": "filtered out: matched by no include pattern"}},
		{"exclude wins over include", Filter{Include: []string{"mail.*"}, Exclude: []string{"t_mail_send", "*.delete"}},
			"t_mail_search",
			map[string]string{"mail.send": `filtered out by the exclude pattern "t_mail_send"`, "mail.delete": `filtered out by the exclude pattern "*.delete"`}},
		{"read-only serves tools that say readOnlyHint: true", Filter{ReadOnly: true},
			"t_mail_search",
			map[string]string{"mail.send": "filtered out as not read-only: its annotations do not say readOnlyHint: true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Options{Dirs: []string{dir}, Prefix: "t", Filter: tc.filter, Backend: &fakeBackend{fn: func(_ context.Context, _ string, p jsontext.Value) (jsontext.Value, error) { return p, nil }}})
			s := r.Snapshot()
			if got := names(s); got != tc.served {
				t.Errorf("served %s, want %s", got, tc.served)
			}
			if r.Tools().Len() != len(s.Entries) {
				t.Errorf("tool set has %d tools, snapshot %d", r.Tools().Len(), len(s.Entries))
			}
			reasons := unservedReasons(s)
			for tool, want := range always {
				if reasons[tool] != want {
					t.Errorf("%s: reason %q, want %q", tool, reasons[tool], want)
				}
			}
			for tool, want := range tc.filtered {
				if reasons[tool] != want {
					t.Errorf("%s: reason %q, want %q", tool, reasons[tool], want)
				}
			}
			// A filtered-out tool is as unknown as a name never declared.
			for _, u := range s.Unserved {
				_, err := r.CallTool(t.Context(), aCall(), &protocol.CallToolRequest{Name: u.Name, Arguments: jsontext.Value(`{}`)})
				if !errors.Is(err, protocol.ErrInvalidParams) {
					t.Errorf("calling unserved %s: %v, want invalid params", u.Name, err)
				}
			}
			for _, e := range s.Entries {
				if res := call(t, r, e.Name, `{}`); res.IsError {
					t.Errorf("calling %s: %+v", e.Name, res)
				}
			}
		})
	}
}

func TestFilterCheckNamesABadPattern(t *testing.T) {
	if err := (Filter{Include: []string{"mail.*"}, Exclude: []string{"ok", "[a"}}).Check(); err == nil || !strings.Contains(err.Error(), `"[a"`) {
		t.Errorf("Check = %v, want an error naming [a", err)
	}
	if err := (Filter{Include: []string{"mail.*", "t_[a-z]?"}}).Check(); err != nil {
		t.Errorf("Check = %v", err)
	}
}

func TestListChangedOnlyWhenTheVisibleSetChanges(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mail.json"), filterManifest)
	changes := 0
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Filter: Filter{ReadOnly: true}, OnChange: func(*Snapshot, Changes) { changes++ }})
	// Editing a tool clients do not see changes nothing for them.
	writeFile(t, filepath.Join(dir, "mail.json"), strings.Replace(filterManifest, "Send mail.", "Send an email.", 1))
	r.Reload()
	if changes != 0 {
		t.Errorf("%d changes after editing a filtered-out tool", changes)
	}
	writeFile(t, filepath.Join(dir, "mail.json"), strings.Replace(filterManifest, "Search mail.", "Search email.", 1))
	r.Reload()
	if changes != 1 {
		t.Errorf("%d changes after editing a served tool, want 1", changes)
	}
	// A tool that becomes read-only appears.
	writeFile(t, filepath.Join(dir, "mail.json"), strings.Replace(filterManifest, `"readOnlyHint":false`, `"readOnlyHint":true`, 1))
	r.Reload()
	if changes != 2 || names(r.Snapshot()) != "t_mail_search,t_mail_send" {
		t.Errorf("%d changes, served %s", changes, names(r.Snapshot()))
	}
}

func TestDuplicatesWithTheSameMethodAreServedOnceWithAnInfoLine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "core.json"), manifestJSON("core", "contacts.list", "contacts.get"))
	writeFile(t, filepath.Join(dir, "integrations.json"), manifestJSON("integrations", "contacts.list", "contacts.get"))
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Logger: &log})
	s := r.Snapshot()
	if got := names(s); got != "t_contacts_list,t_contacts_get" {
		t.Errorf("served %s", got)
	}
	if len(s.Problems) != 0 {
		t.Errorf("problems: %s", problemStrings(s.Problems))
	}
	if got := strings.Count(logs.String(), `"level":"info"`); got != 2 || strings.Contains(logs.String(), `"level":"warn"`) || !strings.Contains(logs.String(), "served once") {
		t.Errorf("want two info lines and no warning, log:\n%s", logs.String())
	}
	// Reloads do not repeat them.
	logs.Reset()
	writeFile(t, filepath.Join(dir, "other.json"), manifestJSON("other", "other.tool"))
	r.Reload()
	if strings.Contains(logs.String(), "served once") {
		t.Errorf("fold logged again on reload:\n%s", logs.String())
	}
}
