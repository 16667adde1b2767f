package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The MCP specification lets a client ignore the server's stderr: a
// bridge whose stderr pipe nobody reads must go on serving, log lines or
// not, and end at the end of stdin.
func TestAStderrNobodyReadsNeverStopsTheBridge(t *testing.T) {
	t.Parallel()
	dir := manifestDir(t, map[string]string{"echo.json": echoManifest})
	sock := filepath.Join(t.TempDir(), "absent.sock") // every call fails, and logs twice
	cmd := bridgeCmd(dir, sock)
	stderr, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stderr.Close() })
	cmd.Stderr = w // a file: the bridge gets the pipe itself, with no copier reading it
	r := runBridge(t, cmd)
	w.Close()
	t.Cleanup(func() { // before runBridge's, which waits for the bridge to end
		if t.Failed() {
			r.cmd.Process.Kill()
		}
	})
	const n = 3000 // some 1.5 MB of log lines; the pipe holds 64 KiB
	go func() {    // writes the calls; the test closes stdin after their answers
		bw := bufio.NewWriter(r.stdin)
		for i := 1; i <= n; i++ {
			fmt.Fprintln(bw, callN(i, i))
		}
		bw.Flush()
	}()
	waitCount(t, r.out, n, 30*time.Second)
	exited := make(chan struct{})
	go func() { // ends when the bridge does, or is killed
		r.finish(t)
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Error("the bridge did not end at the end of stdin")
		r.cmd.Process.Kill()
		<-exited
	}
	if errs := r.out.exactlyOnce(t, n); errs != n {
		t.Errorf("%d tool errors, want %d: the backend is absent", errs, n)
	}
	// What stderr took before it filled are whole JSON lines, but for
	// the last one, which the full pipe may have cut.
	br := bufio.NewReader(stderr)
	lines := 0
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break
		}
		lines++
		if !json.Valid(line) {
			t.Errorf("stderr line %d is not a JSON log line: %.200s", lines, line)
		}
	}
	t.Logf("stderr holds %d lines; the rest were dropped", lines)
}
