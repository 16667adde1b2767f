package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

func TestAuditSettings(t *testing.T) {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want auditOptions
	}{
		{"off by default", nil, nil, auditOptions{maxSize: 10 << 20, keep: 5}},
		{"a path under ~", nil, []string{"--audit-log", "~/logs/audit.log"}, auditOptions{path: filepath.Join(home, "logs", "audit.log"), maxSize: 10 << 20, keep: 5}},
		{"a relative path becomes absolute", nil, []string{"--audit-log", "audit.log"}, auditOptions{path: filepath.Join(cwd, "audit.log"), maxSize: 10 << 20, keep: 5}},
		{"every setting from its variable", map[string]string{"TAIRSEACH_AUDIT_LOG": "/var/a.log", "TAIRSEACH_AUDIT_VALUES": "yes", "TAIRSEACH_AUDIT_MAX_SIZE": "1MiB", "TAIRSEACH_AUDIT_KEEP": "9"}, nil,
			auditOptions{path: "/var/a.log", values: true, maxSize: 1 << 20, keep: 9}},
		{"an empty variable leaves it off", map[string]string{"TAIRSEACH_AUDIT_LOG": ""}, nil, auditOptions{maxSize: 10 << 20, keep: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(t, tc.vars, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, o.audit, cmp.AllowUnexported(auditOptions{})); diff != "" {
				t.Errorf("audit options (-want +got):\n%s", diff)
			}
		})
	}
	for _, args := range [][]string{
		{"--audit-values"},
		{"--audit-log", "/a.log", "--audit-max-size", "1KiB"},
		{"--audit-log", "/a.log", "--audit-keep", "0"},
	} {
		if _, err := parse(t, nil, args...); !errors.As(err, new(usageError)) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

func TestInstallAuditAddsTheSharedLog(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	vars := map[string]string{"HOME": home}
	entry := func(args ...string) []string {
		t.Helper()
		e, _, errb := testEnv(vars)
		if code := run(context.Background(), e, append([]string{"install", "cursor", "--force"}, args...)); code != exitOK {
			t.Fatalf("exit %d: %s", code, errb)
		}
		var got map[string]map[string]clientconfig.CommandEntry
		json.Unmarshal([]byte(readFile(t, filepath.Join(home, ".cursor", "mcp.json"))), &got)
		return got["mcpServers"]["tairseach"].Args
	}
	if got, want := entry("--audit"), []string{"--audit-log=" + filepath.Join(home, ".tairseach", "audit.log")}; !cmp.Equal(got, want) {
		t.Errorf("install --audit: args %q, want %q", got, want)
	}
	if got, want := entry("--audit", "--audit-log", "/var/log/t.log"), []string{"--audit-log=/var/log/t.log"}; !cmp.Equal(got, want) {
		t.Errorf("install --audit --audit-log: args %q, want %q", got, want)
	}
	if got := entry(); len(got) != 0 {
		t.Errorf("install: args %q, want none", got)
	}
}

func TestDoctorSaysWhetherCallsAreRecorded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	shared := filepath.Join(dir, "shared.log")
	for name, perm := range map[string]os.FileMode{file: 0o600, shared: 0o644} {
		writeFile(t, name, "x\n", perm)
	}
	for _, tc := range []struct {
		name string
		a    auditOptions
		want check
	}{
		{"off", auditOptions{}, check{statusInfo, "off: calls are not recorded", ""}},
		{"on, to be created", auditOptions{path: filepath.Join(dir, "new", "audit.log"), maxSize: 10 << 20, keep: 5},
			check{statusOK, "on: " + filepath.Join(dir, "new", "audit.log") + ", to be created; rotated at 10M, 5 files kept", ""}},
		{"on, with values", auditOptions{path: filepath.Join(dir, "v.log"), values: true, maxSize: 10 << 20, keep: 5},
			check{statusOK, "argument values recorded, secrets redacted", ""}},
		{"readable by others", auditOptions{path: shared, maxSize: 10 << 20, keep: 5},
			check{statusWarn, "on: " + shared + ", 2B and 0 rotated files, writable; readable by others (-rw-r--r--)", "chmod 600 " + shared}},
		{"unwritable", auditOptions{path: filepath.Join(file, "audit.log")},
			check{statusFail, "on, but " + filepath.Join(file, "audit.log") + " cannot be written", "until then calls are served and not recorded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertResult(t, checkAudit(tc.a), tc.want)
		})
	}
}

// The call command records its call as the call command's, with the CLI
// as its transport.
func TestCallIsRecorded(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.json"), okManifest, 0o644)
	log := filepath.Join(t.TempDir(), "audit.log")
	e, _, errb := testEnv(nil)
	args := []string{"call", "--manifests", dir, "--socket", filepath.Join(t.TempDir(), "none.sock"), "--audit-log", log, "tairseach_notes_list"}
	if code := run(context.Background(), e, args); code != exitError {
		t.Fatalf("exit %d, want 1 (no backend): %s", code, errb)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got audit.Entry
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v: %q", err, data)
	}
	if got.Transport != "cli" || got.Client != "tairseach-mcp call" || got.Name != "tairseach_notes_list" || got.Outcome != "unavailable" {
		t.Errorf("entry %+v", got)
	}
}
