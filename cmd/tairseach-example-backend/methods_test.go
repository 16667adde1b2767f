package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestNotes(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)

	created := result[note](t, c, "notes.create", map[string]any{"title": "Groceries", "body": "oat milk, bread"})
	if !validNoteID(created.ID) || len(created.ID) != 12 || created.Title != "Groceries" || created.Body != "oat milk, bread" {
		t.Errorf("created %+v", created)
	}
	if _, err := time.Parse(time.RFC3339, created.CreatedAt); err != nil {
		t.Errorf("created_at %q: %v", created.CreatedAt, err)
	}
	other := result[note](t, c, "notes.create", map[string]any{"title": "Call Aoife"})
	if other.Body != "" || other.ID == created.ID {
		t.Errorf("second note %+v", other)
	}

	if got := result[note](t, c, "notes.get", map[string]any{"id": created.ID}); got != created {
		t.Errorf("get = %+v, want %+v", got, created)
	}

	for _, tt := range []struct {
		params    map[string]any
		wantIDs   []string
		wantTotal int
	}{
		{params: map[string]any{"query": "MILK"}, wantIDs: []string{created.ID}, wantTotal: 1},
		{params: map[string]any{"query": "aoife"}, wantIDs: []string{other.ID}, wantTotal: 1},
		{params: map[string]any{"query": "nothing like this"}, wantIDs: []string{}, wantTotal: 0},
		{params: map[string]any{"limit": 1}, wantTotal: 2},
		{params: map[string]any{}, wantTotal: 2},
	} {
		got := result[noteList](t, c, "notes.list", tt.params)
		if got.Total != tt.wantTotal {
			t.Errorf("list(%v) total %d, want %d", tt.params, got.Total, tt.wantTotal)
		}
		if tt.wantIDs != nil {
			var ids []string
			for _, n := range got.Notes {
				ids = append(ids, n.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.wantIDs) {
				t.Errorf("list(%v) ids %v, want %v", tt.params, ids, tt.wantIDs)
			}
		}
		if limit, ok := tt.params["limit"].(int); ok && len(got.Notes) > limit {
			t.Errorf("list(%v) returned %d notes", tt.params, len(got.Notes))
		}
	}

	if got := result[map[string]bool](t, c, "notes.delete", map[string]any{"id": created.ID}); !got["deleted"] {
		t.Errorf("delete = %v", got)
	}
	r := wantError(t, c, "notes.get", map[string]any{"id": created.ID}, codeNotFound, "note not found")
	if string(r.Error.Data) != `{"id":"`+created.ID+`"}` {
		t.Errorf("not found data %s", r.Error.Data)
	}
	wantError(t, c, "notes.delete", map[string]any{"id": created.ID}, codeNotFound, "note not found")
	if got := result[noteList](t, c, "notes.list", nil); got.Total != 1 || got.Notes[0].ID != other.ID {
		t.Errorf("list after delete = %+v", got)
	}
}

func TestNotesRejectBadParams(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	tests := []struct {
		method string
		params any
		msg    string
	}{
		{"notes.create", map[string]any{}, "title is required"},
		{"notes.create", nil, "title is required"},
		{"notes.create", map[string]any{"title": 42}, "title must be a string"},
		{"notes.create", map[string]any{"title": nil}, "title must be a string"},
		{"notes.create", map[string]any{"title": "  "}, "title must not be empty"},
		{"notes.create", map[string]any{"title": strings.Repeat("x", 201)}, "at most 200"},
		{"notes.create", map[string]any{"title": "t", "body": []int{1}}, "body must be a string"},
		{"notes.create", map[string]any{"title": "t", "tags": []string{"x"}}, `unknown parameter "tags"`},
		{"notes.create", `["t"]`, "params must be an object"},
		{"notes.get", map[string]any{}, "id is required"},
		{"notes.get", map[string]any{"id": 12}, "id must be a string"},
		{"notes.get", map[string]any{"id": "../../etc/passwd"}, "is not a note id"},
		{"notes.delete", map[string]any{"id": "ABC"}, "is not a note id"},
		{"notes.list", map[string]any{"limit": 0}, "limit must be between 1 and 1000, got 0"},
		{"notes.list", map[string]any{"limit": 1001}, "limit must be between 1 and 1000, got 1001"},
		{"notes.list", map[string]any{"limit": 2.5}, "limit must be an integer"},
		{"notes.list", map[string]any{"limit": "5"}, "limit must be an integer"},
		{"notes.list", map[string]any{"query": true}, "query must be a string"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v is refused", tt.method, tt.params), func(t *testing.T) {
			wantError(t, c, tt.method, tt.params, codeInvalidParams, tt.msg)
		})
	}
	// An integral float is an integer, as in JSON Schema.
	result[noteList](t, c, "notes.list", `{"limit":10.0}`)
	if entries, _ := os.ReadDir(ts.dataDir); len(entries) != 0 {
		t.Errorf("refused calls left files: %v", entries)
	}
}

func TestNotesPersistAcrossRestarts(t *testing.T) {
	data := t.TempDir()
	first := startServer(t, serverConfig{dataDir: data})
	n := result[note](t, first.dial(t), "notes.create", map[string]any{"title": "keep", "body": "me"})
	first.stop(t)

	second := startServer(t, serverConfig{dataDir: data})
	if got := result[note](t, second.dial(t), "notes.get", map[string]any{"id": n.ID}); got != n {
		t.Errorf("after restart get = %+v, want %+v", got, n)
	}
	entries, err := os.ReadDir(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != n.ID+".json" {
		t.Fatalf("data folder holds %v, want only %s.json", entries, n.ID)
	}
	fi, err := os.Stat(filepath.Join(data, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("note file mode %v, want 0600", fi.Mode())
	}
}

func TestNotesUnderConcurrentConnections(t *testing.T) {
	ts := startServer(t, serverConfig{})
	const conns, perConn = 8, 5
	var wg sync.WaitGroup
	ids := make(chan string, conns*perConn)
	for range conns {
		c := ts.dial(t)
		// t.Fatal may not be called off the test goroutine: report and return.
		wg.Go(func() {
			enc, dec := json.NewEncoder(c.c), json.NewDecoder(c.r)
			for i := range perConn {
				var created, listed struct {
					Result struct{ ID string } `json:"result"`
					Error  json.RawMessage     `json:"error"`
				}
				enc.Encode(map[string]any{"jsonrpc": "2.0", "id": i, "method": "notes.create", "params": map[string]any{"title": fmt.Sprint("note ", i)}})
				enc.Encode(map[string]any{"jsonrpc": "2.0", "id": i, "method": "notes.list"})
				if err := dec.Decode(&created); err != nil || created.Error != nil {
					t.Errorf("create: %v %s", err, created.Error)
					return
				}
				if err := dec.Decode(&listed); err != nil || listed.Error != nil {
					t.Errorf("list: %v %s", err, listed.Error)
					return
				}
				ids <- created.Result.ID
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("id %s handed out twice", id)
		}
		seen[id] = true
	}
	if got := result[noteList](t, ts.dial(t), "notes.list", map[string]any{"limit": 1000}); got.Total != conns*perConn || len(got.Notes) != conns*perConn {
		t.Errorf("list total %d with %d notes, want %d", got.Total, len(got.Notes), conns*perConn)
	}
}

// sharedFolder builds a files root with a file, a hidden file, a folder,
// and symlinks pointing inside and outside it.
func sharedFolder(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "shared"), filepath.Join(base, "outside")
	for _, dir := range []string{filepath.Join(root, "photos", "2024"), outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		filepath.Join(root, "readme.txt"): "hello\n",
		filepath.Join(root, ".hidden"):    "h",
		filepath.Join(outside, "secret"):  "s",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"to-photos":          "photos",
		"to-outside":         outside,
		"to-outside-rel":     "../outside",
		"to-etc":             "/etc",
		"dangling-outside":   "/no/such/place",
		"photos/2024/up-two": "../../..",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestFilesList(t *testing.T) {
	root, outside := sharedFolder(t)
	ts := startServer(t, serverConfig{root: root})
	c := ts.dial(t)

	got := result[fileList](t, c, "files.list", nil)
	var names []string
	for _, e := range got.Entries {
		names = append(names, e.Name+":"+e.Type)
	}
	want := "dangling-outside:symlink photos:dir readme.txt:file to-etc:symlink to-outside:symlink to-outside-rel:symlink to-photos:symlink"
	if strings.Join(names, " ") != want || got.Path != "." || got.Truncated {
		t.Errorf("list . = %+v\nnames %s\nwant  %s", got, strings.Join(names, " "), want)
	}
	for _, e := range got.Entries {
		if e.Name == "readme.txt" && e.Size != 6 {
			t.Errorf("readme.txt size %d, want 6", e.Size)
		}
		if _, err := time.Parse(time.RFC3339, e.Modified); err != nil {
			t.Errorf("%s modified %q: %v", e.Name, e.Modified, err)
		}
	}

	hidden := result[fileList](t, c, "files.list", map[string]any{"path": ".", "include_hidden": true})
	if len(hidden.Entries) != len(got.Entries)+1 || hidden.Entries[0].Name != ".hidden" {
		t.Errorf("with hidden: %+v", hidden.Entries)
	}

	for _, path := range []string{"photos", "photos/", "./photos", "to-photos", "photos/2024/.."} {
		r := result[fileList](t, c, "files.list", map[string]any{"path": path})
		if len(r.Entries) != 1 || r.Entries[0].Name != "2024" {
			t.Errorf("list %q = %+v, want the 2024 folder", path, r)
		}
	}

	escapes := []string{"..", "../outside", "/etc", outside, "photos/../..", "to-outside", "to-outside/", "to-outside-rel", "to-etc", "to-etc/ssh", "dangling-outside", "photos/2024/up-two"}
	for _, path := range escapes {
		t.Run(path+" is refused", func(t *testing.T) {
			r := wantError(t, c, "files.list", map[string]any{"path": path}, codePermission, "Permission denied: path escapes the shared folder")
			if r.Error.Message != "Permission denied: path escapes the shared folder" {
				t.Errorf("message %q", r.Error.Message)
			}
		})
	}

	wantError(t, c, "files.list", map[string]any{"path": "missing"}, codeNotFound, "no such file or directory: missing")
	wantError(t, c, "files.list", map[string]any{"path": "readme.txt/x"}, codeNotFound, "no such file or directory: readme.txt/x")
	wantError(t, c, "files.list", map[string]any{"path": "readme.txt"}, codeInvalidParams, "readme.txt is a file, not a folder")
	wantError(t, c, "files.list", map[string]any{"path": 1}, codeInvalidParams, "path must be a string")
	wantError(t, c, "files.list", map[string]any{"include_hidden": "yes"}, codeInvalidParams, "include_hidden must be a boolean")
}

func TestSystemInfo(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	got := result[systemInfo](t, c, "system.info", map[string]any{})
	if got.OS != runtime.GOOS || got.Arch != runtime.GOARCH || got.GoVersion != runtime.Version() ||
		got.PID != os.Getpid() || got.NumCPU < 1 || got.UptimeSeconds < 0 || got.Hostname == "" || got.User == "" {
		t.Errorf("system.info = %+v", got)
	}
	wantError(t, c, "system.info", map[string]any{"verbose": true}, codeInvalidParams, `unknown parameter "verbose": this method takes no parameters`)
}

func TestSecretsReadIsAlwaysRefused(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	r := wantError(t, c, "secrets.read", map[string]any{"name": "api-key"}, codePermission, "Permission denied")
	if string(r.Error.Data) != `{"reason":"the example backend never reveals secrets"}` {
		t.Errorf("data %s", r.Error.Data)
	}
	wantError(t, c, "secrets.read", map[string]any{}, codeInvalidParams, "name is required")
}

func TestDebugSleep(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	for _, ms := range []int{0, 5} {
		if got := result[map[string]int](t, c, "debug.sleep", map[string]any{"ms": ms}); got["slept_ms"] != ms {
			t.Errorf("sleep %d = %v", ms, got)
		}
	}
	for _, tt := range []struct {
		params any
		msg    string
	}{
		{map[string]any{"ms": -1}, "ms must be between 0 and 600000, got -1"},
		{map[string]any{"ms": 600001}, "ms must be between 0 and 600000, got 600001"},
		{map[string]any{"ms": "10"}, "ms must be an integer"},
		{`{"ms":1e400}`, "ms must be an integer"},
	} {
		wantError(t, c, "debug.sleep", tt.params, codeInvalidParams, tt.msg)
	}
}

func TestEcho(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	for _, params := range []string{`{"a":[1,{"b":null}],"s":"<é>"}`, `[1,"two"]`, `{}`} {
		r := c.call("echo", params)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(r.Result, &got); err != nil || string(got["params"]) != params {
			t.Errorf("echo %s = %s (%v)", params, r.Result, err)
		}
	}
	if r := c.call("echo", nil); string(r.Result) != `{"params":null}` {
		t.Errorf("echo without params = %s", r.Result)
	}
}

// files.list on a named pipe answers at once: opening one for reading
// would wait for a writer that never comes.
func TestFilesListOnANamedPipeAnswersAtOnce(t *testing.T) {
	root, _ := sharedFolder(t)
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, serverConfig{root: root})
	c := ts.dial(t)
	c.c.SetDeadline(time.Now().Add(10 * time.Second)) // a hang fails the test instead of stalling it
	wantError(t, c, "files.list", map[string]any{"path": "pipe"}, codeInvalidParams, "pipe is a named pipe, not a folder")
	got := result[fileList](t, c, "files.list", nil)
	if !slices.ContainsFunc(got.Entries, func(e fileEntry) bool { return e.Name == "pipe" && e.Type == "other" }) {
		t.Errorf("list . = %+v, want the pipe as other", got.Entries)
	}
}

// notes.complete completes ids by prefix and titles by what they contain,
// newest first, as tairseach-mcp asks for them.
func TestNotesComplete(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	var ids []string
	for _, title := range []string{"Groceries", "Garden plans", "groceries again", "Groceries"} {
		ids = append(ids, result[note](t, c, "notes.create", map[string]any{"title": title}).ID)
	}
	got := result[completion](t, c, "notes.complete", map[string]any{"argument": "topic", "value": "GROC", "arguments": map[string]string{"id": ids[0]}})
	if !slices.Equal(got.Values, []string{"Groceries", "groceries again"}) && !slices.Equal(got.Values, []string{"groceries again", "Groceries"}) || got.Total != 2 || got.HasMore {
		t.Errorf("titles: %+v", got)
	}
	got = result[completion](t, c, "notes.complete", map[string]any{"argument": "id", "value": ids[1][:6]})
	if !slices.Contains(got.Values, ids[1]) || slices.ContainsFunc(got.Values, func(id string) bool { return !strings.HasPrefix(id, ids[1][:6]) }) {
		t.Errorf("ids starting %s: %+v", ids[1][:6], got)
	}
	if got := result[completion](t, c, "notes.complete", map[string]any{"argument": "id"}); got.Total != 4 || len(got.Values) != 4 {
		t.Errorf("every id: %+v", got)
	}
	wantError(t, c, "notes.complete", map[string]any{"value": "x"}, codeInvalidParams, "argument is required")
}

func TestBackendStatus(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	result[note](t, c, "notes.create", map[string]any{"title": "one"})
	got := result[status](t, c, "backend.status", nil)
	if got.Status != "ok" || got.Notes != 1 || got.FilesRoot == "" || got.UptimeSeconds < 0 {
		t.Errorf("status %+v", got)
	}
	if _, err := time.Parse(time.RFC3339, got.StartedAt); err != nil {
		t.Errorf("started_at: %v", err)
	}
	wantError(t, c, "backend.status", map[string]any{"x": 1}, codeInvalidParams, "takes no parameters")
}
