package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
)

// testMachine is a machine with the given OS's layout in a temporary
// home; on Windows APPDATA points inside it.
func testMachine(t *testing.T, goos string, vars map[string]string) clientconfig.Machine {
	t.Helper()
	home := t.TempDir()
	all := map[string]string{}
	if goos == "windows" {
		all["APPDATA"] = filepath.Join(home, "AppData", "Roaming")
	}
	for k, v := range vars {
		all[k] = strings.ReplaceAll(v, "$HOME", home)
	}
	return clientconfig.Machine{GOOS: goos, Home: home, Getenv: func(k string) string { return all[k] }}
}

func client(t *testing.T, name string) clientconfig.Client {
	t.Helper()
	c, err := findClient(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// installed makes the client look installed: its folder exists.
func installed(t *testing.T, m clientconfig.Machine, c clientconfig.Client) string {
	t.Helper()
	dir, file := c.Paths(m)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return file
}

func writeFile(t *testing.T, path, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFindClientSuggests(t *testing.T) {
	tests := []struct{ typed, want, err string }{
		{"claude-desktop", "claude-desktop", ""},
		{"VSCode", "vscode", ""},
		{"claude_code", "claude-code", ""},
		{"vs-code", "vscode", ""},
		{"curser", "", `unknown client "curser" (did you mean cursor?); the clients are`},
		{"claude", "", "did you mean claude-desktop or claude-code?"},
		{"zed", "", `unknown client "zed"; the clients are claude-desktop, claude-code, cursor, vscode, windsurf`},
	}
	for _, tt := range tests {
		c, err := findClient(tt.typed)
		if c.Name != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("findClient(%q) = %q, %v; want %q, %q", tt.typed, c.Name, err, tt.want, tt.err)
		}
	}
}

func TestInstallRefusesATemporaryGoRunBinary(t *testing.T) {
	if err := checkExecutable("/tmp/go-build1234/b001/exe/tairseach-mcp"); err == nil || !strings.Contains(err.Error(), "go build -o") {
		t.Errorf("go run binary: %v", err)
	}
	for _, p := range []string{"/usr/local/bin/tairseach-mcp", "/tmp/go-build1234/b001/cli.test", "/home/me/exe/tairseach-mcp"} {
		if err := checkExecutable(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestInstallCommand runs the command as a user would: the flags given
// are carried, paths made absolute; install's own flags are not, nor the
// variables set, which the client would not see: those are named.
func TestInstallCommand(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	cwd, _ := os.Getwd()
	realHome, _ := os.UserHomeDir() // resolve expands ~ in --socket with the process's home
	exe, err := executable()
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": home, "TAIRSEACH_CALL_TIMEOUT": "5s", "TAIRSEACH_LOG_LEVEL": "info"}
	e, out, errb := testEnv(vars)
	code := run(context.Background(), e, []string{"install", "cursor", "--name", "t", "--socket", "~/s.sock", "--manifests", "m1", "--manifests", "/abs/m2", "--prefix", "tairseach", "--no-watch", "--force"})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var got map[string]map[string]clientconfig.CommandEntry
	json.Unmarshal([]byte(readFile(t, filepath.Join(home, ".cursor", "mcp.json"))), &got)
	want := clientconfig.CommandEntry{Command: exe, Args: []string{
		"--manifests=" + filepath.Join(cwd, "m1"), "--manifests=/abs/m2", "--no-watch", "--socket=" + filepath.Join(realHome, "s.sock"),
	}}
	if diff := cmp.Diff(want, got["mcpServers"]["t"]); diff != "" {
		t.Errorf("entry (-want +got):\n%s\noutput: %s", diff, out)
	}
	if want := "Not written (variables of this shell, which the client does not see; give install their flags to write them): TAIRSEACH_CALL_TIMEOUT TAIRSEACH_LOG_LEVEL\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("output does not name the variables set:\n%s", out)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"install", "cursr"}, exitUsage, "did you mean cursor?"},
		{[]string{"install"}, exitUsage, "name a client"},
		{[]string{"install", "--list", "cursor"}, exitUsage, "--list takes no client"},
		{[]string{"uninstall"}, exitUsage, "name a client"},
		{[]string{"install", "windsurf"}, exitError, "Windsurf not found"},
		{[]string{"install", "cursor", "--name", "t"}, exitError, "pass --force to replace it"},
	} {
		e, _, errb := testEnv(vars)
		if code := run(context.Background(), e, tt.args); code != tt.code || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tt.args, code, errb, tt.code, tt.want)
		}
	}
}

// A stdio entry carries no flag of the HTTP bridge: install refuses them,
// and their variables are not written either.
func TestInstallWritesNoHTTPFlagsInAStdioEntry(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	file := filepath.Join(home, ".cursor", "mcp.json")
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "127.0.0.1:9000"}, "unknown flag: --listen"},
		{[]string{"--transport", "http"}, "unknown flag: --transport"},
		{[]string{"--tls-cert", "c.pem", "--tls-key", "k.pem"}, "unknown flag: --tls-cert"},
		{[]string{"--insecure-http"}, "unknown flag: --insecure-http"},
		{[]string{"--max-sessions", "3"}, "unknown flag: --max-sessions"},
		{[]string{"--auth-token-file", tokenFile}, "--auth-token-file goes with --url"},
	} {
		e, _, errb := testEnv(map[string]string{"HOME": home})
		if code := run(t.Context(), e, append([]string{"install", "cursor", "--force"}, tt.args...)); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("install %v: exit %d, stderr %q; want %d and %q", tt.args, code, errb, exitUsage, tt.want)
		}
		if _, err := os.Stat(file); err == nil {
			t.Fatalf("install %v wrote %s:\n%s", tt.args, file, readFile(t, file))
		}
	}
	vars := map[string]string{"HOME": home, "TAIRSEACH_TRANSPORT": "http", "TAIRSEACH_LISTEN": "127.0.0.1:9000", "TAIRSEACH_AUTH_TOKEN_FILE": tokenFile,
		"TAIRSEACH_TLS_CERT": "c.pem", "TAIRSEACH_TLS_KEY": "k.pem", "TAIRSEACH_MAX_SESSIONS": "3"}
	e, out, errb := testEnv(vars)
	if code := run(t.Context(), e, []string{"install", "cursor", "--socket", "/run/t.sock"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var got map[string]map[string]clientconfig.CommandEntry
	json.Unmarshal([]byte(readFile(t, file)), &got)
	if args := got["mcpServers"]["tairseach"].Args; !slices.Equal(args, []string{"--socket=/run/t.sock"}) {
		t.Errorf("the HTTP bridge's variables set: args %q, want --socket alone\n%s", args, out)
	}
}
