package registry

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// importManifest declares notes.import with the taskSupport given ("" for
// none), and notes.list without.
func importManifest(support string) string {
	execution := ""
	if support != "" {
		execution = `,"execution":{"taskSupport":"` + support + `"}`
	}
	return `{"id":"notes","tools":[` +
		`{"name":"notes.import","description":"Imports.","inputSchema":{"type":"object"}` + execution + `},` +
		`{"name":"notes.list","description":"Lists.","inputSchema":{"type":"object"}}],` +
		`"implementation":{"methods":{"notes.import":"notes.import","notes.list":"notes.list"}}}`
}

// A tool's taskSupport follows its manifest, and a change of it is a
// change of the list that clients are told of.
func TestTaskSupportFollowsTheManifests(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.json")
	writeFile(t, path, importManifest("optional"))
	var changes int
	r := New(Options{Dirs: []string{dir}, Prefix: "p", OnChange: func(*Snapshot, Changes) { changes++ }})
	want := func(step string, support protocol.TaskSupport) {
		t.Helper()
		tools := r.Snapshot().Tools()
		if got := tools.TaskSupport("p_notes_import"); got != support {
			t.Errorf("%s: p_notes_import's taskSupport %q, want %q", step, got, support)
		}
		if got := tools.TaskSupport("p_notes_list"); got != protocol.TaskForbidden {
			t.Errorf("%s: p_notes_list's taskSupport %q", step, got)
		}
	}
	want("loaded", protocol.TaskOptional)
	writeFile(t, path, importManifest("required"))
	r.Reload()
	want("required", protocol.TaskRequired)
	writeFile(t, path, importManifest(""))
	r.Reload()
	want("none", protocol.TaskForbidden)
	if changes != 2 {
		t.Errorf("OnChange called %d times, want twice: clients must list again", changes)
	}
}

// sink hands over the response to a request.
type sink chan string

func (s sink) Send(m protocol.Message) {
	b, final := string(m.Bytes()), m.Final()
	m.Release()
	if final {
		s <- b
	}
}

// A task's backend call is bounded by the task timeout, not the call
// timeout; the audit log records the task's creation, its call (with the
// task's id) and its end.
func TestATaskHasTheTaskTimeout(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.json"), importManifest("optional"))
	backend := &fakeBackend{fn: func(ctx context.Context, _ string, _ jsontext.Value) (jsontext.Value, error) {
		select {
		case <-time.After(300 * time.Millisecond):
			return jsontext.Value(`{"imported":3}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	rec := &recorder{}
	r := New(Options{Dirs: []string{dir}, Prefix: "p", Backend: backend, CallTimeout: 100 * time.Millisecond, TaskTimeout: time.Minute, Audit: rec})
	srv := &protocol.Server{Tools: r, TaskAfter: 10 * time.Millisecond, TaskRecorded: r.RecordTask}
	ss := srv.NewSession(sink(make(chan string, 16)), protocol.SessionOptions{Transport: "stdio"})
	defer ss.Close()
	ask := func(line string) string {
		out := sink(make(chan string, 1))
		if err := ss.Handle(t.Context(), []byte(line), out); err != nil {
			t.Fatal(err)
		}
		return <-out
	}
	ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)

	if got := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"p_notes_import"}}`); !strings.Contains(got, "did not answer notes.import within 100ms") {
		t.Errorf("an ordinary call of 300 ms under a 100 ms call timeout: %s", got)
	}
	created := ask(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"p_notes_import","task":{}}}`)
	i := strings.Index(created, `"taskId":"`)
	if i < 0 {
		t.Fatalf("no task: %s", created)
	}
	id := created[i+len(`"taskId":"`):][:32]
	if got := ask(`{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"` + id + `"}}`); !strings.Contains(got, `\"imported\":3`) {
		t.Errorf("the task's result: %s", got)
	}
	var kinds []string
	for _, e := range rec.take() {
		kinds = append(kinds, e.Kind+" "+e.Outcome+" "+e.Task)
		if e.ManifestName != "notes.import" || e.Method != "notes.import" || e.Principal != "session:"+e.Session {
			t.Errorf("entry %+v", e)
		}
	}
	want := []string{audit.KindTool + " timeout ", "task created " + id, "tool ok " + id, "task completed " + id}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
}

// A backend's result that is a string is the tool's text as it is, not
// quoted: a greeting reads "Hello, Ann!".
func TestAStringResultIsItsText(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.json"), importManifest(""))
	for _, tt := range []struct{ reply, text string }{
		{`"Hello, Ann!"`, "Hello, Ann!"},
		{`"line\none \u00e9"`, "line\none é"},
		{`{"a":1}`, `{"a":1}`},
		{`42`, `42`},
	} {
		r := New(Options{Dirs: []string{dir}, Prefix: "p", Backend: &fakeBackend{fn: func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
			return jsontext.Value(tt.reply), nil
		}}})
		res, err := r.CallTool(t.Context(), aCall(), request("p_notes_list", `{}`))
		if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].String() != tt.text {
			t.Errorf("a reply %s: %+v %v, want the text %q", tt.reply, res, err, tt.text)
		}
	}
}
