//go:build unix

package audit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// The tests here start this test binary again as writer processes: with
// AUDIT_TEST_WRITER set, TestMain runs writerProcess instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("AUDIT_TEST_WRITER") != "" {
		os.Exit(writerProcess())
	}
	os.Exit(m.Run())
}

// writerProcess records AUDIT_TEST_COUNT entries (forever when 0, saying
// "writing" on stdout once the log holds a megabyte) to the log at
// AUDIT_TEST_WRITER, with AUDIT_TEST_MAX_SIZE and AUDIT_TEST_KEEP, and
// closes it.
func writerProcess() int {
	atoi := func(name string) int { n, _ := strconv.Atoi(os.Getenv(name)); return n }
	path, count := os.Getenv("AUDIT_TEST_WRITER"), atoi("AUDIT_TEST_COUNT")
	opts := Options{MaxSize: int64(atoi("AUDIT_TEST_MAX_SIZE")), Keep: atoi("AUDIT_TEST_KEEP"), QueueSize: count}
	w := NewWriter(path, opts)
	if count == 0 {
		// A burst of long lines until killed.
		values := jsontext.Value(`{"body":"` + strings.Repeat("x", 190) + `"}`)
		said := false
		for i := 0; ; i++ {
			e := call(i)
			e.Args = values
			w.Record(e)
			if !said && i%1000 == 0 {
				if fi, err := os.Stat(path); err == nil && fi.Size() > 1<<20 {
					fmt.Println("writing")
					said = true
				}
			}
		}
	}
	for i := range count {
		w.Record(&Entry{Kind: KindTool, Name: "t_child", Client: "child", BytesIn: i})
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// writers starts n writer processes on the log at path.
func writers(t *testing.T, n int, path string, env ...string) []*exec.Cmd {
	t.Helper()
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), append([]string{"AUDIT_TEST_WRITER=" + path}, env...)...)
		cmd.Stderr = os.Stderr
		cmds = append(cmds, cmd)
	}
	return cmds
}

func runAll(t *testing.T, cmds []*exec.Cmd) {
	t.Helper()
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer process: %v", err)
		}
	}
}

// checkEveryEntry checks that the log at path holds count entries of
// each of the n processes, each once, and nothing else.
func checkEveryEntry(t *testing.T, path string, n, count int) {
	t.Helper()
	es := entries(t, logLines(t, path)) // every line whole
	seen := map[int]map[int]bool{}      // by PID, the BytesIn numbers
	for _, e := range es {
		if e.Kind != KindTool || e.Name != "t_child" {
			t.Fatalf("unexpected entry %+v", e)
		}
		if seen[e.PID] == nil {
			seen[e.PID] = map[int]bool{}
		}
		if seen[e.PID][e.BytesIn] {
			t.Errorf("process %d wrote entry %d twice", e.PID, e.BytesIn)
		}
		seen[e.PID][e.BytesIn] = true
	}
	if len(seen) != n {
		t.Errorf("entries of %d processes, want %d", len(seen), n)
	}
	for pid, got := range seen {
		if len(got) != count {
			t.Errorf("process %d: %d entries, want %d", pid, len(got), count)
		}
	}
	if len(es) != n*count {
		t.Errorf("%d entries in all, want %d", len(es), n*count)
	}
}

func TestFourProcessesShareOneLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	runAll(t, writers(t, 4, path, "AUDIT_TEST_COUNT=10000", "AUDIT_TEST_MAX_SIZE=1000000000"))
	if files, _ := Files(path); len(files) != 1 {
		t.Errorf("files %q, want one (no rotation)", files)
	}
	checkEveryEntry(t, path, 4, 10000)
}

func TestProcessesRotatingAtOnceLoseNoEntry(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	runAll(t, writers(t, 3, path, "AUDIT_TEST_COUNT=5000", "AUDIT_TEST_MAX_SIZE=65536", "AUDIT_TEST_KEEP=1000"))
	files, _ := Files(path)
	if len(files) < 20 {
		t.Errorf("%d files, want the log rotated many times", len(files))
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Size() > 65536+1024 {
			t.Errorf("%s: %v bytes (%v)", f, fi.Size(), err)
		}
	}
	checkEveryEntry(t, path, 3, 5000)
}

func TestAWriterKilledMidWriteLeavesAtMostTheLastLinePartial(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	cmd := writers(t, 1, path, "AUDIT_TEST_COUNT=0", "AUDIT_TEST_MAX_SIZE=1000000000")[0]
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "writing\n" {
		t.Fatalf("writer said %q (%v)", line, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the writer was not killed")
	}

	lines := logLines(t, path)
	partial := !strings.HasSuffix(lines[len(lines)-1], "\n")
	if partial {
		lines = lines[:len(lines)-1]
	}
	written, _ := counts(entries(t, lines)) // every line but the last is whole
	t.Logf("%d entries written; the last line partial: %v", written, partial)

	// The next writer, another process, ends a partial line first.
	runAll(t, writers(t, 1, path, "AUDIT_TEST_COUNT=100", "AUDIT_TEST_MAX_SIZE=1000000000"))
	s, err := Summarize(t.Context(), path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	wantTruncated := 0
	if partial {
		wantTruncated = 1
	}
	if s.Truncated != wantTruncated || s.Foreign != 0 {
		t.Errorf("summary counts %d truncated and %d foreign lines, want %d and 0", s.Truncated, s.Foreign, wantTruncated)
	}
	if s.Calls != written+100 {
		t.Errorf("summary counts %d calls, want %d", s.Calls, written+100)
	}
}
