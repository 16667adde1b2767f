package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// doctorRun runs the built binary with args in a home of its own.
func doctorRun(t *testing.T, home string, args ...string) (out string, code int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(b), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(b), 0
}

// The real binary, installed into a client, checked against a backend:
// every check passes, the unmapped tool is a warning, and the session it
// starts with itself is clean.
func TestDoctorOnARealSetup(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o700); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--manifests", dir, "--socket", be.Path}
	if out, code := doctorRun(t, home, append([]string{"install", "cursor"}, flags...)...); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}

	out, code := doctorRun(t, home, append([]string{"doctor"}, flags...)...)
	if code != 0 {
		t.Errorf("exit %d, want 0 (warnings only)", code)
	}
	for _, want := range []string{
		"✓ socket      " + be.Path + ": the backend accepts connections",
		"! manifests   3 tools served from " + dir + "; 0 errors, 1 warning",
		"✓ tool names  all 3 valid for Claude Desktop; 3 renamed to fit",
		"✓ tool count  3: within Cursor's 40 and OpenAI's 128",
		"✓ cursor      " + filepath.Join(home, ".cursor", "mcp.json") + ": runs this binary, 2 flags",
		"✓ stdout      4 lines, each one JSON-RPC message; 4 requests answered once each",
		"- audit log   off: calls are not recorded",
		"- consoles    no bridge serves the owner's console now",
		"10 checks: 0 failures, 1 warning",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, code = doctorRun(t, home, "doctor", "--json", "--manifests", dir, "--socket", filepath.Join(dir, "none.sock"))
	var checks []struct{ Name, Status, Message, Fix string }
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if code != 1 || len(checks) != 10 || checks[0].Name != "socket" || checks[0].Status != "fail" || checks[0].Fix == "" {
		t.Errorf("no backend: exit %d, want 1:\n%s", code, out)
	}
	// The bridge's own session is as clean without a backend.
	if last := checks[len(checks)-1]; last.Name != "stdout" || last.Status != "ok" {
		t.Errorf("stdout check without a backend: %+v", last)
	}
}

// A bridge that serves a console writes its run file (0600, its pid and
// the console's address) while it runs, doctor lists that console, and
// the file is gone once the bridge exits.
func TestARunningBridgesConsoleIsListedUntilItExits(t *testing.T) {
	home := t.TempDir()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": clientsManifest})
	cmd := bridgeCmd(dir, be.Path, "--transport", "http", "--listen", "127.0.0.1:0")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	b := startHTTP(t, cmd)
	run := filepath.Join(home, ".tairseach", "run", fmt.Sprintf("bridge-%d.json", cmd.Process.Pid))
	fi, err := os.Stat(run)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the run file of the running bridge: %v %v; want one, mode 0600", fi, err)
	}
	data, _ := os.ReadFile(run)
	var rf struct {
		PID int    `json:"pid"`
		URL string `json:"url"`
	}
	if err := json.Unmarshal(data, &rf); err != nil || rf.PID != cmd.Process.Pid || !strings.HasPrefix(rf.URL, strings.TrimSuffix(b.url, "/mcp")+"/ui/?s=") {
		t.Errorf("run file %s (%v); want pid %d and the console of %s with its secret", data, err, cmd.Process.Pid, b.url)
	}
	out, _ := doctorRun(t, home, "doctor", "--manifests", dir, "--socket", be.Path)
	if !strings.Contains(out, "1 console of running bridges: "+rf.URL) {
		t.Errorf("doctor does not list the console:\n%s", out)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	<-b.exited
	cmd.Wait()
	if _, err := os.Stat(run); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the run file after the bridge exited: %v", err)
	}
	out, _ = doctorRun(t, home, "doctor", "--manifests", dir, "--socket", be.Path)
	if !strings.Contains(out, "- consoles    no bridge serves the owner's console now") {
		t.Errorf("doctor after the bridge exited:\n%s", out)
	}
}
