//go:build unix

package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// logBuffer collects a Writer's own log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the log lines at level.
func (l *logBuffer) lines(level string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.b.String()) {
		if strings.Contains(line, `"level":"`+level+`"`) {
			out = append(out, line)
		}
	}
	return out
}

func newTestWriter(t *testing.T, path string, opts Options) (*Writer, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	log := zerolog.New(logs)
	opts.Logger = &log
	w := NewWriter(path, opts)
	t.Cleanup(func() { w.Close() })
	return w, logs
}

func call(i int) *Entry {
	return &Entry{Kind: KindTool, Name: fmt.Sprintf("t_tool_%d", i%3), Outcome: OutcomeOK, Client: "test", BytesIn: i}
}

// logLines reads every line of the log's files, oldest first.
func logLines(t *testing.T, path string) []string {
	t.Helper()
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			lines = append(lines, line)
		}
	}
	return lines
}

// entries parses lines, which must all be whole entries.
func entries(t *testing.T, lines []string) []Entry {
	t.Helper()
	var es []Entry
	for i, line := range lines {
		var e Entry
		if !strings.HasSuffix(line, "\n") || json.Unmarshal([]byte(line), &e) != nil {
			t.Fatalf("line %d is not a whole entry: %q", i+1, line)
		}
		es = append(es, e)
	}
	return es
}

// counts returns the number of call entries and the sum of the dropped
// counts.
func counts(es []Entry) (calls int, dropped int64) {
	for _, e := range es {
		if e.Kind == KindDropped {
			dropped += e.Dropped
		} else {
			calls++
		}
	}
	return calls, dropped
}

func TestWriterAppendsOneLinePerEntry(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new", "folder", "audit.log")
	w, logs := newTestWriter(t, path, Options{})
	for i := range 50 {
		w.Record(call(i))
	}
	e := call(50)
	e.Client, e.ClientVersion = "evil\x1b]0;title\x07", strings.Repeat("v", 1000)
	w.Record(e)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	es := entries(t, logLines(t, path))
	if len(es) != 51 {
		t.Fatalf("%d entries, want 51", len(es))
	}
	ids := map[string]bool{}
	for _, e := range es {
		if e.PID != os.Getpid() || ids[e.ID] || len(e.Time) != len(timeLayout) {
			t.Errorf("entry %+v: want this PID, a new ID and a time to the millisecond", e)
		}
		ids[e.ID] = true
	}
	if last := es[50]; last.Client != "evil\uFFFD]0;title\uFFFD" || len(last.ClientVersion) > maxClient {
		t.Errorf("client %q, version of %d bytes: want them made safe", last.Client, len(last.ClientVersion))
	}
	for p, want := range map[string]os.FileMode{path: 0o600, path + ".lock": 0o600, filepath.Dir(path): 0o700 | os.ModeDir, filepath.Dir(filepath.Dir(path)): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v, %v; want mode %v", p, fi.Mode(), err, want)
		}
	}
	if errs := logs.lines("error"); len(errs) > 0 {
		t.Errorf("errors logged: %q", errs)
	}
}

func TestWriterDoesNotFollowASymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.log")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	w, logs := newTestWriter(t, path, Options{})
	for i := range 10 {
		w.Record(call(i))
	}
	w.Close()
	if data, _ := os.ReadFile(target); string(data) != "precious\n" {
		t.Errorf("the link's target now holds %q", data)
	}
	if errs := logs.lines("error"); len(errs) != 1 || !strings.Contains(errs[0], "symbolic link") {
		t.Errorf("error lines %q, want one that names the symbolic link", errs)
	}
}

func TestWriterOfAnUnwritablePathLogsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w, logs := newTestWriter(t, filepath.Join(file, "audit.log"), Options{})
	for i := range 100 {
		w.Record(call(i)) // never blocks, whatever the file
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if errs := logs.lines("error"); len(errs) != 1 || !strings.Contains(errs[0], "not a directory") {
		t.Errorf("error lines %q, want one", errs)
	}
}

func TestWriterRecreatesARemovedFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "logs")
	path := filepath.Join(dir, "audit.log")
	w, logs := newTestWriter(t, path, Options{}) // has the log and its lock open
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	w.Record(call(1))
	w.Close()
	if es := entries(t, logLines(t, path)); len(es) != 1 || es[0].BytesIn != 1 {
		t.Errorf("entries after the folder was removed: %+v, want the call", es)
	}
	if errs := logs.lines("error"); len(errs) > 0 {
		t.Errorf("errors logged: %q", errs)
	}
}

// holdLock takes the log's lock as another process would.
func holdLock(t *testing.T, path string) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

func TestRecordNeverBlocksAndCountsWhatItDrops(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	w, _ := newTestWriter(t, path, Options{QueueSize: 16})
	// Another process holds the lock: the writer cannot write.
	unlock := holdLock(t, path)
	const n = 5000
	for i := range n {
		w.Record(call(i))
	}
	unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	es := entries(t, logLines(t, path))
	calls, dropped := counts(es)
	if calls+int(dropped) != n || dropped == 0 {
		t.Errorf("%d entries written and %d counted as dropped, want %d in all and some dropped", calls, dropped, n)
	}
}

func TestAPartialLineIsEndedBeforeTheNextEntry(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	partial := `{"time":"2025-06-01T10:00:00.000Z","id":"dead-1","pid":1,"kind":"tool","na`
	if err := os.WriteFile(path, []byte(partial), 0o600); err != nil {
		t.Fatal(err)
	}
	w, _ := newTestWriter(t, path, Options{})
	w.Record(call(0))
	w.Close()
	lines := logLines(t, path)
	if len(lines) != 2 || lines[0] != partial+"\n" {
		t.Fatalf("lines %q, want the partial line alone, then the entry", lines)
	}
	entries(t, lines[1:])
	s, err := Summarize(t.Context(), path, Filter{})
	if err != nil || s.Calls != 1 || s.Truncated != 1 || s.Foreign != 0 {
		t.Errorf("summary %+v (%v): want 1 call and the partial line counted as truncated", s, err)
	}
}

func TestRotationKeepsTheNewestFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	// One writer after another, as processes come and go; each Close
	// writes what it was given.
	for round := range 20 {
		w, _ := newTestWriter(t, path, Options{MaxSize: 2000, Keep: 3})
		for i := range 10 {
			w.Record(call(10*round + i))
		}
		w.Close()
	}
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{path + ".3", path + ".2", path + ".1", path}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %q, want %q", files, want)
	}
	last := -1
	for _, f := range files {
		fi, _ := os.Stat(f)
		if fi.Size() > 2000 || fi.Mode() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v; want at most 2000, 0600", f, fi.Size(), fi.Mode())
		}
		// The files hold a run of the calls, in order.
		data, _ := os.ReadFile(f)
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var e Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if last >= 0 && e.BytesIn != last+1 {
				t.Errorf("%s: call %d after %d", f, e.BytesIn, last)
			}
			last = e.BytesIn
		}
	}
	if last != 199 {
		t.Errorf("the last call is %d, want 199", last)
	}
}

func TestAnEntryThatCannotBeEncodedIsCountedAsDropped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	w, logs := newTestWriter(t, path, Options{})
	bad := call(0)
	bad.Args = []byte(`{"not":`) // not JSON
	w.Record(bad)
	w.Record(call(1))
	w.Close()
	calls, dropped := counts(entries(t, logLines(t, path)))
	if calls != 1 || dropped != 1 {
		t.Errorf("%d entries written, %d counted as dropped; want 1 and 1", calls, dropped)
	}
	if errs := logs.lines("error"); len(errs) != 1 || !strings.Contains(errs[0], "cannot be encoded") {
		t.Errorf("error lines %q", errs)
	}
}
