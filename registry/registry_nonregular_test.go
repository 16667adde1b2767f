//go:build unix

package registry

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// newWithin returns New(opts), failing the test if loading blocks.
func newWithin(t *testing.T, opts Options) *Registry {
	t.Helper()
	got := make(chan *Registry, 1)
	// Loads; ends when New returns (never, if a read blocks for good).
	go func() { got <- New(opts) }()
	select {
	case r := <-got:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("loading the manifests still blocked after 5s")
		return nil
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestANamedPipeIsReportedAndTheOtherManifestsServe(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), manifestJSON("a", "one"))
	mkfifo(t, filepath.Join(dir, "pipe.json"))
	r := newWithin(t, Options{Dirs: []string{dir}})
	s := r.Snapshot()
	if got := names(s); got != "one" {
		t.Errorf("tools = %q, want one", got)
	}
	if got, want := problemStrings(s.Problems), "pipe.json: error: cannot read: not a regular file (named pipe)"; !strings.HasSuffix(got, want) || strings.Count(got, "\n") != 0 {
		t.Errorf("problems:\n%s\nwant one ending %q", got, want)
	}
}

// A named pipe that appears while watching is skipped, and the watcher
// keeps picking up the files after it.
func TestWatchSkipsANamedPipeCreatedLater(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), manifestJSON("a", "one"))
	changes := make(chan string, 100)
	reports := make(chan string, 100)
	r := newWithin(t, Options{Dirs: []string{dir}, Debounce: 20 * time.Millisecond,
		OnChange: func(s *Snapshot, _ Changes) { changes <- names(s) },
		Report:   func(_ zerolog.Level, msg string) { reports <- msg },
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	// Watches until cancelled; the cleanup waits for it, but not forever:
	// a watcher stuck in a read must fail the test, not hang it.
	go func() { defer close(done); r.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the watcher did not stop within 5s")
		}
	})
	mkfifo(t, filepath.Join(dir, "pipe.json"))
	timeout := time.After(10 * time.Second)
	for reported := false; !reported; {
		select {
		case msg := <-reports:
			reported = strings.HasSuffix(msg, "pipe.json: error: cannot read: not a regular file (named pipe)")
		case <-timeout:
			t.Fatal("the named pipe was not reported within 10s")
		}
	}
	writeFile(t, filepath.Join(dir, "b.json"), manifestJSON("b", "two"))
	expectNames(t, changes, "one,two")
}
