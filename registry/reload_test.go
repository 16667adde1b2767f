package registry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// later sets r's clock ahead of the system's by lead: the files written
// by then look lead older than they are.
func later(r *Registry, lead time.Duration) {
	r.now = func() time.Time { return time.Now().Add(lead) }
}

// A reload reads the files that the system says changed, and those that
// changed within the last 2 s whatever it says; it parses those whose
// contents changed.
func TestAReloadReadsOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"a", "b", "c", "d"} {
		writeFile(t, path(name+".json"), manifestJSON(name, name+".one"))
	}
	var reported []string
	r := New(Options{Dirs: []string{dir}, Report: func(_ zerolog.Level, msg string) { reported = append(reported, msg) }})
	if r.did.read != 4 || r.did.parsed != 4 {
		t.Fatalf("the first load read %d files and parsed %d, want 4 and 4", r.did.read, r.did.parsed)
	}
	// A time the files were not written at, and a step that is nothing
	// like a file system's tick.
	stamp := time.Now().Add(-time.Hour).Truncate(time.Second)
	steps := []struct {
		name         string
		lead         time.Duration // the registry's clock ahead of the files' times
		edit         func()
		read, parsed int
		names        string
		report       string // in a new report; "" for none
	}{
		{name: "files that changed within 2 s are read again, and not parsed when their contents are the same",
			read: 4, parsed: 0, names: "a_one,b_one,c_one,d_one"},
		{name: "files unchanged for 2 s are not read", lead: 3 * time.Second,
			read: 0, parsed: 0, names: "a_one,b_one,c_one,d_one"},
		{name: "a file rewritten at the same size, with a new modification time, is read and parsed", lead: 3 * time.Second,
			edit: func() {
				writeFile(t, path("b.json"), manifestJSON("b", "b.two"))
				chtimes(t, path("b.json"), stamp)
			},
			read: 1, parsed: 1, names: "a_one,b_two,c_one,d_one"},
		{name: "a file whose times change is read, and not parsed when its contents are the same", lead: 3 * time.Second,
			edit: func() { chtimes(t, path("c.json"), stamp.Add(time.Second)) },
			read: 1, parsed: 0, names: "a_one,b_two,c_one,d_one"},
		{name: "a file renamed over another is read and parsed", lead: 3 * time.Second,
			edit: func() {
				writeFile(t, path(".d.json.tmp"), manifestJSON("d", "d.two"))
				chtimes(t, path(".d.json.tmp"), stamp)
				if err := os.Rename(path(".d.json.tmp"), path("d.json")); err != nil {
					t.Fatal(err)
				}
			},
			read: 1, parsed: 1, names: "a_one,b_two,c_one,d_two"},
		{name: "a file that turns bad is read, parsed and reported, and keeps its last good tools", lead: 3 * time.Second,
			edit: func() { writeFile(t, path("a.json"), `{"id":"a","tools":[`) },
			read: 1, parsed: 1, names: "a_one,b_two,c_one,d_two", report: "invalid JSON"},
		{name: "a bad file unchanged is not read again, keeps its last good tools and is not reported again", lead: 3 * time.Second,
			read: 0, parsed: 0, names: "a_one,b_two,c_one,d_two"},
		{name: "a new file is read and parsed, a removed one's tools go away", lead: 3 * time.Second,
			edit: func() {
				writeFile(t, path("e.json"), manifestJSON("e", "e.one"))
				if err := os.Remove(path("c.json")); err != nil {
					t.Fatal(err)
				}
			},
			read: 1, parsed: 1, names: "a_one,b_two,d_two,e_one"},
	}
	for _, st := range steps {
		reported = nil
		later(r, st.lead)
		if st.edit != nil {
			st.edit()
		}
		s := r.Reload()
		if r.did.read != st.read || r.did.parsed != st.parsed {
			t.Errorf("%s: read %d files and parsed %d, want %d and %d", st.name, r.did.read, r.did.parsed, st.read, st.parsed)
		}
		if got := names(s); got != st.names {
			t.Errorf("%s: names = %s, want %s", st.name, got, st.names)
		}
		if all := strings.Join(reported, "\n"); st.report == "" && all != "" || !strings.Contains(all, st.report) {
			t.Errorf("%s: reported %q, want %q", st.name, all, st.report)
		}
	}
}

func chtimes(t *testing.T, path string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// A file is current while its fileID stands and did not change within
// the last 2 s.
func TestAFileIsCurrentWhileItsIDStands(t *testing.T) {
	now := time.Now()
	id := fileID{dev: 1, ino: 2, size: 3, mtime: now.Add(-time.Minute).UnixNano(), ctime: now.Add(-time.Minute).UnixNano()}
	st := &fileState{id: id, hasID: true}
	for _, tt := range []struct {
		name string
		st   *fileState
		id   fileID
		want bool
	}{
		{"the same id, a minute old", st, id, true},
		{"no state", nil, id, false},
		{"a state without an id", &fileState{id: id}, id, false},
		{"another device", st, fileID{dev: 9, ino: 2, size: 3, mtime: id.mtime, ctime: id.ctime}, false},
		{"another inode", st, fileID{dev: 1, ino: 9, size: 3, mtime: id.mtime, ctime: id.ctime}, false},
		{"another size", st, fileID{dev: 1, ino: 2, size: 9, mtime: id.mtime, ctime: id.ctime}, false},
		{"another modification time", st, fileID{dev: 1, ino: 2, size: 3, mtime: id.mtime + 1, ctime: id.ctime}, false},
		{"another change time", st, fileID{dev: 1, ino: 2, size: 3, mtime: id.mtime, ctime: id.ctime + 1}, false},
	} {
		if got := tt.st.current(tt.id, now); got != tt.want {
			t.Errorf("%s: current = %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		name         string
		mtime, ctime time.Duration // before now
		want         bool
	}{
		{"modified 1 s ago", time.Second, time.Second, false},
		{"modified 2 s ago", 2 * time.Second, 2 * time.Second, true},
		{"its inode changed 1 s ago", time.Minute, time.Second, false},
		{"modified in the future", -time.Minute, -time.Minute, false},
	} {
		id := fileID{dev: 1, ino: 2, size: 3, mtime: now.Add(-tt.mtime).UnixNano(), ctime: now.Add(-tt.ctime).UnixNano()}
		st := &fileState{id: id, hasID: true}
		if got := st.current(id, now); got != tt.want {
			t.Errorf("%s, the same id: current = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A snapshot built from parses kept across reloads is the one a first
// load of the same files builds: the same names in the same order, the
// same conflicts, renames, unserved tools and content, and the same
// problems in the same order.
func TestAReloadBuildsWhatAFirstLoadBuilds(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a/notes.json": notesContent,
		"b.json":       manifestJSON("b", "contacts.list", "contacts_list", "shared.one"),
		"c.json":       manifestJSON("c", "contacts-list", "contacts.list"),
		"d.json":       `{"id":"d","tools":[{"name":"d.one","description":"","inputSchema":{"type":"object","oneOf":[{}]}},{"name":"d.bad","inputSchema":{"type":"string"}}],"implementation":{"methods":{"d.one":"d.one","d.two":"d.two"}}}`,
		"e.json":       `{"id":"e","tools":[`,
		"f.json":       manifestJSON("f", "f.one"),
	}
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	opts := Options{Dirs: []string{dir, filepath.Join(dir, "missing")}, Prefix: "t", Filter: Filter{Exclude: []string{"t_f_*"}}}
	r := New(opts)
	later(r, 3*time.Second)
	for _, edit := range []struct{ name, data string }{
		{"c.json", manifestJSON("c", "contacts.list", "contacts-list", "shared.one")},
		{"f.json", manifestJSON("f", "f.one", "f.two")},
		{"g.json", manifestJSON("g", "contacts_list")},
	} {
		writeFile(t, filepath.Join(dir, edit.name), edit.data)
		if r.Reload(); r.did.read != 1 {
			t.Fatalf("a reload after %s changed read %d files, want 1", edit.name, r.did.read)
		}
	}
	got, want := r.Snapshot(), New(opts).Snapshot()
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"names", names(got), names(want)},
		{"problems", got.Problems, want.Problems},
		{"unserved tools", got.Unserved, want.Unserved},
		{"unserved content", got.UnservedContent, want.UnservedContent},
		{"renames", got.renames, want.renames},
		{"tools", got.Tools().Tools(), want.Tools().Tools()},
		{"resources", got.ResourceSet(), want.ResourceSet()},
		{"prompts", got.PromptSet(), want.PromptSet()},
	} {
		if d := cmp.Diff(c.want, c.got, cmp.Comparer(func(a, b *protocol.ResourceSet) bool { return a.Equal(b) }),
			cmp.Comparer(func(a, b *protocol.PromptSet) bool { return a.Equal(b) })); d != "" {
			t.Errorf("%s differ from a first load's (-first load +reloaded):\n%s", c.what, d)
		}
	}
	if len(want.Problems) < 5 || !strings.Contains(fmt.Sprint(want.Unserved), "same tool as") {
		t.Errorf("the files lack the cases this test is for: problems %v, unserved %v", want.Problems, want.Unserved)
	}
}

// manyManifests is how many manifest files TestManyManifests loads:
// enough that a reload which costs the whole tree shows, few enough
// for go test.
const manyManifests = 5000

// With many manifest files, each reload during a storm (one file
// rewritten every 50 ms) reads only the files that changed, and the
// bounds that scripts/bench measures against for 20,000 files hold three
// times over: the first load within 9 s, a new tool served within 3 s
// of its file's creation. They catch a regression; the bench measures.
func TestManyManifests(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("loads thousands of manifests; skipped with -short and with the race detector")
	}
	dir := t.TempDir()
	paths := writeMany(t, dir, manyManifests)
	type change struct {
		s    *Snapshot
		read int // files the reload read
	}
	changes := make(chan change, 100)
	var r *Registry
	start := time.Now()
	r = New(Options{Dirs: []string{dir}, OnChange: func(s *Snapshot, _ Changes) {
		// Under the reload's lock, after the first load: r is set.
		select {
		case changes <- change{s, r.did.read}:
		default: // a later snapshot holds what this one does
		}
	}})
	if d := time.Since(start); d > 9*time.Second {
		t.Errorf("the first load of %d manifests took %v, more than 9s", manyManifests, d.Round(time.Millisecond))
	} else {
		t.Logf("the first load of %d manifests took %v", manyManifests, d.Round(time.Millisecond))
	}
	if n := r.Snapshot().Tools().Len(); n != manyManifests {
		t.Fatalf("%d tools, want %d", n, manyManifests)
	}
	// As if the files were written longer than 2 s ago, however fast the
	// load was: a new file is read once, and then only when it changes.
	later(r, 3*time.Second)

	ctx, cancel := context.WithCancel(t.Context())
	watching, storming := make(chan struct{}), make(chan struct{})
	go func() { defer close(watching); r.Watch(ctx) }() // ends when cancelled
	go func() {                                         // rewrites the first file until cancelled
		defer close(storming)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for gen := 1; ; gen++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				writeFile(t, paths[0], manyManifest(0, gen))
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-watching; <-storming })
	// New files at different points of the watcher's rhythm (a reload
	// at most a second after events begin, however often they come).
	for i, pause := range []time.Duration{0, 400 * time.Millisecond, 800 * time.Millisecond} {
		time.Sleep(pause)
		name := fmt.Sprintf("fresh.tool_%d", i)
		created := time.Now()
		writeFile(t, filepath.Join(dir, fmt.Sprintf("a-fresh%d.json", i)), manifestJSON(name, name))
		var read int
		for served := false; !served; {
			select {
			case c := <-changes:
				_, served = c.s.Lookup(strings.ReplaceAll(name, ".", "_"))
				read = c.read
			case <-time.After(30 * time.Second):
				t.Fatalf("%s was not served within 30s", name)
			}
		}
		d := time.Since(created)
		if d > 3*time.Second {
			t.Errorf("a new tool during a storm over %d manifests was served after %v, more than 3s", manyManifests, d.Round(time.Millisecond))
		}
		// The stormed file and the new one.
		if read > 2 {
			t.Errorf("the reload that served a new tool during a storm over %d manifests read %d files", manyManifests, read)
		}
		t.Logf("a new tool during the storm was served after %v by a reload that read %d files", d.Round(time.Millisecond), read)
	}
}
