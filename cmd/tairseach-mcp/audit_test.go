package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// auditEntries reads the entries of an audit log, which must all be whole.
func auditEntries(t *testing.T, path string) []audit.Entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var es []audit.Entry
	for line := range strings.Lines(string(data)) {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil || !strings.HasSuffix(line, "\n") {
			t.Fatalf("not a whole entry: %q (%v)", line, err)
		}
		es = append(es, e)
	}
	return es
}

// Two bridges, as two clients start them, share one audit log: it records
// each call as it happened, and stats sums it up.
func TestTheAuditLogRecordsWhatHappened(t *testing.T) {
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	log := filepath.Join(t.TempDir(), "logs", "audit.log")

	cs := connectSDK(t, bridgeCmd(dir, be.Path, "--audit-log", log), "2025-11-25", nil)
	ctx := t.Context()
	calls := []struct {
		name string
		args map[string]any
	}{
		{"tairseach_notes_create", map[string]any{"title": "milk"}},
		{"tairseach_notes_fail", map[string]any{}},
		{"tairseach_notes_create", map[string]any{"title": 5}},
	}
	for _, c := range calls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	cs.Close() // the bridge exits at the end of its stdin, and writes what is queued

	// A second bridge, whose backend is down, in the modern protocol.
	cs = connectSDK(t, bridgeCmd(dir, filepath.Join(t.TempDir(), "none.sock"), "--audit-log", log), "2026-07-28", nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": "bread"}})
	if err != nil || !res.IsError {
		t.Fatalf("a call with the backend down: %+v, %v", res, err)
	}
	cs.Close()

	es := auditEntries(t, log)
	type seen struct {
		Name, Method, Outcome, Client, Protocol, Transport, Principal string
		Code                                                          int64
		Keys                                                          string
	}
	var got []seen
	for _, e := range es {
		s := seen{e.Name, e.Method, e.Outcome, e.Client + " " + e.ClientVersion, e.ProtocolVersion, e.Transport, e.Principal, 0, strings.Join(e.ArgKeys, ",")}
		if e.Code != nil {
			s.Code = *e.Code
		}
		got = append(got, s)
	}
	want := []seen{
		{"tairseach_notes_create", "notes.create", "ok", "e2e 1", "2025-11-25", "stdio", "process", 0, "title"},
		{"tairseach_notes_fail", "secrets.read", "backend_error", "e2e 1", "2025-11-25", "stdio", "process", -32011, ""},
		{"tairseach_notes_create", "notes.create", "invalid_arguments", "e2e 1", "2025-11-25", "stdio", "process", 0, "title"},
		{"tairseach_notes_create", "notes.create", "unavailable", "e2e 1", "2026-07-28", "stdio", "process", 0, "title"},
	}
	if len(got) != len(want) {
		t.Fatalf("entries %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if es[0].PID == es[3].PID || es[0].Session == es[3].Session || es[0].Session != es[2].Session {
		t.Errorf("processes %d, %d and sessions %q, %q, %q: want one per bridge", es[0].PID, es[3].PID, es[0].Session, es[2].Session, es[3].Session)
	}
	if data, _ := os.ReadFile(log); bytes.Contains(data, []byte("milk")) {
		t.Error("the log holds an argument's value")
	}
	if fi, err := os.Stat(log); err != nil || fi.Mode() != 0o600 {
		t.Errorf("log mode %v (%v), want 0600", fi.Mode(), err)
	}

	out, err := exec.Command(binary, "stats", log, "--json").Output()
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	var s audit.Summary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if s.Calls != 4 || s.Errors != 3 || len(s.Tools) != 2 || s.Tools[0].Name != "tairseach_notes_create" || s.Tools[0].Calls != 3 ||
		len(s.Clients) != 1 || s.Clients[0].Calls != 4 {
		t.Errorf("stats: %s", out)
	}
	out, err = exec.Command(binary, "stats", log).Output()
	if err != nil || !strings.Contains(string(out), "4 calls, 3 errors (75.0%)") || !strings.Contains(string(out), "1 backend_error (-32011)") {
		t.Errorf("stats: %v\n%s", err, out)
	}
}

// A log that cannot be written never stops a call: the bridge says so
// once, on stderr, and doctor reports it.
func TestAnUnwritableAuditLogNeverStopsCalls(t *testing.T) {
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(file, "audit.log") // under a file: never writable, even for root
	cmd := bridgeCmd(dir, be.Path, "--audit-log", log)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs := connectSDK(t, cmd, "", nil)
	for range 3 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": "milk"}})
		if err != nil || res.IsError {
			t.Fatalf("call: %+v, %v", res, err)
		}
	}
	cs.Close()
	if n := strings.Count(stderr.String(), `"audit log cannot be written`); n != 1 {
		t.Errorf("%d error lines about the audit log, want 1:\n%s", n, stderr.String())
	}

	doctor := exec.Command(binary, "doctor", "--manifests", dir, "--socket", be.Path, "--audit-log", log)
	doctor.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := doctor.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "✗ audit log   on, but "+log+" cannot be written") {
		t.Errorf("doctor: %v\n%s", err, out)
	}
}

// SIGTERM ends the bridge with its audit entries written.
func TestSIGTERMLeavesTheAuditLogWritten(t *testing.T) {
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	log := filepath.Join(t.TempDir(), "audit.log")
	cmd := bridgeCmd(dir, be.Path, "--audit-log", log)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"a"}}}`+"\n")
	if line, err := readLine(stdout); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("response %q, %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if es := auditEntries(t, log); len(es) != 1 || es[0].Outcome != "ok" {
		t.Errorf("entries %+v, want the call", es)
	}
}

// readLine reads one line from r, a byte at a time, so that nothing after
// it is taken.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		if _, err := r.Read(buf); err != nil {
			return b.String(), err
		}
		if buf[0] == '\n' {
			return b.String(), nil
		}
		b.WriteByte(buf[0])
	}
}
