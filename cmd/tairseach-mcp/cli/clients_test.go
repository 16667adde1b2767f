package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/registry/clients"
)

var tokenLine = regexp.MustCompile(`^tsk_[0-9a-f]{8}_[0-9a-f]{32}\n$`)

// clientsCmd runs a clients command with the environment vars and
// returns its exit status, stdout and stderr.
func clientsCmd(vars map[string]string, args ...string) (int, string, string) {
	e, out, errb := testEnv(vars)
	code := run(context.Background(), e, append([]string{"clients"}, args...))
	return code, out.String(), errb.String()
}

// clients add prints the token alone on stdout, once, and writes the
// policy its flags give, the bridge's variables of the same names left
// out; list shows names, policies and last use, never tokens; rotate and
// remove change the file; each refuses what it cannot do.
func TestClientsCommands(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "clients.json")
	logPath := filepath.Join(dir, "audit.log")
	vars := map[string]string{"TAIRSEACH_CLIENTS": path, "TAIRSEACH_AUDIT_LOG": logPath,
		// The bridge's, not a policy's: they must not reach clients add.
		"TAIRSEACH_INCLUDE": "nothing.*", "TAIRSEACH_READ_ONLY": "true", "TAIRSEACH_MAX_IN_FLIGHT": "3"}

	code, out, errOut := clientsCmd(vars, "add", "cursor", "--read-only", "--include", "notes.*,mail.search", "--confirm", "mail.*",
		"--confirm-unsupported", "deny", "--max-in-flight", "2", "--calls-per-minute", "30", "--sampling=false")
	if code != exitOK || !tokenLine.MatchString(out) || !strings.Contains(errOut, "Added client cursor") {
		t.Fatalf("clients add cursor: %d %q %q", code, out, errOut)
	}
	cursorToken := strings.TrimSpace(out)
	code, out, _ = clientsCmd(vars, "add", "script")
	if code != exitOK || !tokenLine.MatchString(out) {
		t.Fatalf("clients add script: %d %q", code, out)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v, mode %v", err, fi.Mode())
	}
	f, err := clients.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Clients["cursor"].Policy.Summary(); got != "read-only; include notes.*,mail.search; confirm mail.*; confirm-unsupported deny; max 2 in flight; 30 calls a minute; no sampling" {
		t.Errorf("cursor's policy: %s", got)
	}
	if got := f.Clients["script"].Policy.Summary(); got != "every right of the bridge" {
		t.Errorf("script's policy, with the bridge's variables set: %s", got)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), cursorToken) {
		t.Error("the file holds a token")
	}

	entry := audit.Entry{Time: "2025-06-01T10:00:00.000Z", Kind: "tool", Name: "t", Principal: "client:cursor", Outcome: "ok"}
	line, _ := json.Marshal(&entry)
	writeFile(t, logPath, string(line)+"\n", 0o600)
	code, out, _ = clientsCmd(vars, "list")
	if code != exitOK || !regexp.MustCompile(`(?m)^cursor +read-only; include .* +\d{4}-\d\d-\d\d \d\d:\d\d +2025-06-01 \d\d:00 +1$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^script +every right of the bridge +\S+ \S+ +- +0$`).MatchString(out) || strings.Contains(out, cursorToken[13:]) {
		t.Errorf("clients list: %d\n%s", code, out)
	}
	code, out, _ = clientsCmd(vars, "list", "--json")
	if code != exitOK || !strings.Contains(out, `"lastUse": "2025-06-01T10:00:00.000Z"`) {
		t.Errorf("clients list --json: %d\n%s", code, out)
	}

	code, out, _ = clientsCmd(vars, "rotate", "cursor")
	if code != exitOK || !tokenLine.MatchString(out) || strings.TrimSpace(out) == cursorToken {
		t.Errorf("clients rotate: %d %q", code, out)
	}
	if f, _ := clients.Read(path); f.Clients["cursor"].Token.Matches(cursorToken) {
		t.Error("the old token still matches after rotate")
	}
	if code, out, _ = clientsCmd(vars, "remove", "script"); code != exitOK || !strings.Contains(out, "Removed client script") {
		t.Errorf("clients remove: %d %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"add", "cursor"}, exitError, `there is a client "cursor" already`},
		{[]string{"add", "a b"}, exitError, "use 1 to 64 letters"},
		{[]string{"add", "x", "--include", "[a"}, exitUsage, "bad pattern"},
		{[]string{"add", "x", "--confirm-unsupported", "ask"}, exitUsage, "confirmUnsupported is allow, page or deny"},
		{[]string{"add", "x", "--calls-per-minute", "-1"}, exitUsage, "are counts"},
		{[]string{"add"}, exitUsage, "accepts 1 arg"},
		{[]string{"rotate", "nobody"}, exitError, `no client "nobody"; the clients are cursor`},
		{[]string{"remove", "nobody"}, exitError, `no client "nobody"`},
		{[]string{"add", "x", "--socket", "/s"}, exitUsage, "unknown flag: --socket"},
	} {
		code, _, errOut := clientsCmd(vars, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("clients %s: %d %q, want %d saying %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.says)
		}
	}
	os.Chmod(path, 0o644)
	if code, _, errOut := clientsCmd(vars, "list"); code != exitError || !strings.Contains(errOut, "others may read it") {
		t.Errorf("clients list of a file others may read: %d %q", code, errOut)
	}
	if code, _, errOut := clientsCmd(map[string]string{"TAIRSEACH_CLIENTS": filepath.Join(dir, "none.json")}, "list"); code != exitError || !strings.Contains(errOut, "no clients file") {
		t.Errorf("clients list of no file: %d %q", code, errOut)
	}
}

// validate --clients checks the clients file as a bridge reads it, and
// the manifests only when they are named.
func TestValidateClients(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	f := &clients.File{Clients: map[string]*clients.Entry{}}
	if _, err := f.Add("cursor", clients.Policy{ReadOnly: true}, fixedNow); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(good); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"clients":{"cursor":{"token":{"id":"0123abcd","sha256":"00"},"policy":{"readonly":true}}}}`, 0o600)
	manifests := filepath.Join(dir, "manifests")
	writeFile(t, filepath.Join(manifests, "broken.json"), `{"id":`, 0o644)
	for _, tc := range []struct {
		args []string
		code int
		says []string
	}{
		{[]string{"--clients", good}, exitOK, []string{good + ": 1 client; 0 errors"}},
		{[]string{"--clients", bad}, exitError, []string{bad + ":clients.cursor.token.sha256: error: ", bad + ":clients.cursor.policy: error: ", "0 clients; 2 errors"}},
		{[]string{"--clients", good, manifests}, exitError, []string{"1 client; 0 errors", "broken.json: error: invalid JSON"}},
	} {
		e, out, _ := testEnv(nil)
		code := run(context.Background(), e, append([]string{"validate"}, tc.args...))
		for _, s := range tc.says {
			if !strings.Contains(out.String(), s) {
				t.Errorf("validate %s: %d\n%s\nwant it to say %q", strings.Join(tc.args, " "), code, out, s)
			}
		}
		if code != tc.code {
			t.Errorf("validate %s: exit %d, want %d", strings.Join(tc.args, " "), code, tc.code)
		}
	}
}

var fixedNow = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

// The guard's cost per request: without named clients (a token compared
// with the owner's), and with them (the token's client looked up by its
// id, its SHA-256 compared), as a bridge wires them.
func BenchmarkGuardNamedClient(b *testing.B) {
	path := filepath.Join(b.TempDir(), "clients.json")
	f := &clients.File{Clients: map[string]*clients.Entry{}}
	var token string
	for i := range 20 {
		t, err := f.Add(fmt.Sprintf("client%d", i), clients.Policy{ReadOnly: i%2 == 0}, fixedNow)
		if err != nil {
			b.Fatal(err)
		}
		token = t
	}
	if err := f.Save(path); err != nil {
		b.Fatal(err)
	}
	set, err := clients.Open(path, clients.Options{Registry: registry.New(registry.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	named := &namedClients{set: set}
	for _, bc := range []struct {
		name  string
		guard mcphttp.Guard
		token string
	}{
		{"the owner's token, no named clients", mcphttp.Guard{Token: "0123456789abcdef0123456789abcdef"}, "0123456789abcdef0123456789abcdef"},
		{"a named client's token", mcphttp.Guard{Token: "0123456789abcdef0123456789abcdef", Clients: named.lookup}, token},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8411/mcp", nil)
			r.Header.Set("Authorization", "Bearer "+bc.token)
			b.ReportAllocs()
			for b.Loop() {
				if d := bc.guard.Check(r, true); d.Status != 0 {
					b.Fatal(d.Reason)
				}
			}
		})
	}
}
