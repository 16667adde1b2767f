//go:build unix

package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a few
// seconds, so a read that blocks fails the test instead of hanging the
// suite. A blocked f is left behind: nothing can unblock it.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	// Runs f; ends when f returns (never, if f blocks for good).
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("still blocked after 5s")
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestLoadReportsANamedPipeAndServesTheRest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(goodManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, "pipe.json"))
	var ms []*Manifest
	var problems []Problem
	within(t, func() { ms, problems = Load(dir) })
	if len(ms) != 1 || ms[0].ID != "notes" {
		t.Errorf("served %d manifests, want the one regular file", len(ms))
	}
	if len(problems) != 1 || !strings.HasSuffix(problems[0].String(), "pipe.json: error: cannot read: not a regular file (named pipe)") {
		t.Errorf("problems:\n%s", joinProblems(problems))
	}
}

func TestReadDataRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.json")
	mkfifo(t, fifo)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, kind string
	}{
		{"a named pipe", fifo, "named pipe"},
		{"a symlink to a named pipe", filepath.Join(dir, "l-pipe.json"), "named pipe"},
		{"a symlink to an endless device", filepath.Join(dir, "z.json"), "character device"},
		{"a symlink to a folder", filepath.Join(dir, "d.json"), "folder"},
	}
	symlink(t, fifo, tests[1].path)
	symlink(t, "/dev/zero", tests[2].path)
	symlink(t, sub, tests[3].path)
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			var err error
			within(t, func() { _, err = ReadData(tt.path) })
			if !errors.Is(err, ErrNotRegular) {
				t.Fatalf("err = %v, want ErrNotRegular", err)
			}
			if want := "not a regular file (" + tt.kind + ")"; !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say %q", err, want)
			}
		})
		// The path may be replaced between the stat and the open: what
		// was opened is checked again, and opening does not block.
		t.Run(tt.name+" swapped in after the stat is refused", func(t *testing.T) {
			var err error
			within(t, func() { _, err = readOpened(tt.path) })
			if !errors.Is(err, ErrNotRegular) {
				t.Fatalf("err = %v, want ErrNotRegular", err)
			}
		})
	}
}

// An endless device is refused before anything is read from it, so
// refusing it costs next to no memory.
func TestAnEndlessDeviceIsNotRead(t *testing.T) {
	link := filepath.Join(t.TempDir(), "z.json")
	symlink(t, "/dev/zero", link)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var problems []Problem
	within(t, func() { _, problems = ReadFile(link) })
	runtime.ReadMemStats(&after)
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "not a regular file (character device)") {
		t.Errorf("problems:\n%s", joinProblems(problems))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("allocated %d bytes refusing /dev/zero", n)
	}
}

// A file resource is read like a manifest: a named pipe or an endless
// device behind its path is refused at once, never waited on or read.
func TestReadTailRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.log")
	mkfifo(t, fifo)
	zero := filepath.Join(dir, "zero.log")
	symlink(t, "/dev/zero", zero)
	for _, path := range []string{fifo, zero} {
		var err error
		within(t, func() { _, _, err = ReadTail(path, 10) })
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadTail(%s) = %v, want ErrNotRegular", filepath.Base(path), err)
		}
	}
}
