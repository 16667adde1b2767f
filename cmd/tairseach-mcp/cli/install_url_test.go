package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
)

const bridgeURL = "http://127.0.0.1:8411/mcp"

func installURLEntry(t *testing.T, m machine, c mcpClient, token string, o installOptions) (string, error) {
	t.Helper()
	if o.name == "" {
		o.name = "tairseach"
	}
	var out bytes.Buffer
	err := runInstall(&out, m, c, urlEntry{url: bridgeURL, token: token}, o)
	return out.String(), err
}

// Each client that speaks HTTP gets its own HTTP entry, as its
// documentation spells it; the token, when there is one, as a header.
func TestInstallURLWritesEachClientsHTTPEntry(t *testing.T) {
	auth := map[string]any{"Authorization": "Bearer s3cret"}
	tests := []struct {
		client, token string
		want          map[string]any // the entry
	}{
		{"claude-code", "", map[string]any{"type": "http", "url": bridgeURL}},
		{"claude-code", "s3cret", map[string]any{"type": "http", "url": bridgeURL, "headers": auth}},
		{"vscode", "", map[string]any{"type": "http", "url": bridgeURL}},
		{"vscode", "s3cret", map[string]any{"type": "http", "url": bridgeURL, "headers": auth}},
		{"cursor", "", map[string]any{"url": bridgeURL}},
		{"cursor", "s3cret", map[string]any{"url": bridgeURL, "headers": auth}},
		{"windsurf", "", map[string]any{"serverUrl": bridgeURL}},
		{"windsurf", "s3cret", map[string]any{"serverUrl": bridgeURL, "headers": auth}},
	}
	for _, tt := range tests {
		t.Run(tt.client+" token "+tt.token, func(t *testing.T) {
			m := testMachine(t, "linux", nil)
			c := client(t, tt.client)
			file := installed(t, m, c)
			if _, err := installURLEntry(t, m, c, tt.token, installOptions{}); err != nil {
				t.Fatal(err)
			}
			var got map[string]map[string]any
			if err := json.Unmarshal([]byte(readFile(t, file)), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got[c.key]["tairseach"]); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
			out, err := installURLEntry(t, m, c, tt.token, installOptions{})
			if err != nil || !strings.Contains(out, "nothing to change") {
				t.Errorf("the same install again: %v\n%s", err, out)
			}
			var list bytes.Buffer
			runList(&list, m, "/opt/bin/tairseach-mcp", "tairseach")
			if !strings.Contains(list.String(), "installed, reaches "+bridgeURL) {
				t.Errorf("install --list:\n%s", list.String())
			}
		})
	}
	t.Run("claude-desktop", func(t *testing.T) {
		m := testMachine(t, "darwin", nil)
		c := client(t, "claude-desktop")
		file := installed(t, m, c)
		_, err := installURLEntry(t, m, c, "", installOptions{})
		if err == nil || !strings.Contains(err.Error(), "Claude Desktop starts its servers as commands (stdio) only: install it without --url") {
			t.Errorf("err = %v", err)
		}
		if _, err := os.Stat(file); err == nil {
			t.Error("a file was written")
		}
	})
}

// A file that will hold the token becomes 0600; --dry-run, and the
// refusal to replace another entry, never show the token.
func TestInstallURLKeepsTheTokenPrivate(t *testing.T) {
	m := testMachine(t, "linux", nil)
	c := client(t, "cursor")
	file := installed(t, m, c)
	writeFile(t, file, `{"mcpServers": {"other": {"command": "o"}}}`, 0o644)
	out, err := installURLEntry(t, m, c, "s3cret", installOptions{dryRun: true})
	if err != nil || strings.Contains(out, "s3cret") || !strings.Contains(out, `"Authorization": "Bearer …"`) {
		t.Errorf("--dry-run: %v\n%s", err, out)
	}
	if out, err = installURLEntry(t, m, c, "s3cret", installOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "its mode becomes 0600 (was 0644)") {
		t.Errorf("output:\n%s", out)
	}
	for _, p := range []string{file, file + ".bak"} {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
	_, err = installURLEntry(t, m, c, "n3w", installOptions{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("another token: %v", err)
	}
	// A command entry of the same name is another server: --force
	// replaces it, and back.
	if _, err := install(t, m, c, installOptions{force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := installURLEntry(t, m, c, "", installOptions{}); err == nil {
		t.Error("a URL entry replaced a command entry without --force")
	}
}

func TestCheckURL(t *testing.T) {
	for _, tt := range []struct{ url, err string }{
		{"http://127.0.0.1:8411/mcp", ""},
		{"https://bridge.lan:8443/mcp", ""},
		{"http://[::1]:8411/mcp", ""},
		{"127.0.0.1:8411/mcp", "want the http:// or https:// URL"},
		{"unix:/run/t.sock", "want the http:// or https:// URL"},
		{"ftp://x/mcp", "want the http:// or https:// URL"},
		{"http:///mcp", "want the http:// or https:// URL"},
		{"http://me:pw@127.0.0.1:8411/mcp", "no credentials in the URL"},
	} {
		err := checkURL(tt.url)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("checkURL(%q) = %v, want %q", tt.url, err, tt.err)
		}
	}
}

// The command takes the token from TAIRSEACH_AUTH_TOKEN or
// --auth-token-file, and writes no flags of the bridge: those go to the
// bridge serving HTTP.
func TestInstallURLCommand(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".codeium", "windsurf"), 0o700)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("from-a-file\n"), 0o600)
	for _, tt := range []struct {
		name string
		vars map[string]string
		args []string
		auth string
	}{
		{"no token", nil, nil, ""},
		{"the variable", map[string]string{"TAIRSEACH_AUTH_TOKEN": "from-the-env"}, nil, "Bearer from-the-env"},
		{"the file", nil, []string{"--auth-token-file", tokenFile}, "Bearer from-a-file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"HOME": home}
			for k, v := range tt.vars {
				vars[k] = v
			}
			e, out, errb := testEnv(vars)
			args := append([]string{"install", "windsurf", "--url", bridgeURL, "--force", "--socket", "/x.sock"}, tt.args...)
			if code := run(context.Background(), e, args); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb)
			}
			if !strings.Contains(out.String(), "Not written (they are the HTTP bridge's flags, set where it runs): --socket=/x.sock\n") || strings.Contains(out.String(), "from-") {
				t.Errorf("output:\n%s", out)
			}
			var got map[string]map[string]map[string]any
			json.Unmarshal([]byte(readFile(t, filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"))), &got)
			entry := got["mcpServers"]["tairseach"]
			headers, _ := entry["headers"].(map[string]any)
			if entry["serverUrl"] != bridgeURL || entry["args"] != nil || entry["command"] != nil || (headers["Authorization"] != nil) != (tt.auth != "") || tt.auth != "" && headers["Authorization"] != tt.auth {
				t.Errorf("entry %v", entry)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"install", "cursor", "--url", "localhost:8411"}, "want the http:// or https:// URL"},
		{[]string{"install", "cursor", "--url", bridgeURL, "--audit"}, "--audit goes to the bridge"},
		{[]string{"install", "claude-desktop", "--url", bridgeURL}, "install it without --url"},
	} {
		e, _, errb := testEnv(map[string]string{"HOME": home})
		if code := run(context.Background(), e, tt.args); code == exitOK || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want %q", tt.args, code, errb, tt.want)
		}
	}
}

// doctor asks the bridge at a URL entry's address, with its token, as
// the client would.
func TestDoctorChecksURLEntries(t *testing.T) {
	srv := &protocol.Server{Info: serverInfo(), Tools: noTools{}}
	h := mcphttp.NewHandler(srv, mcphttp.Options{Guard: mcphttp.Guard{Token: "s3cret"}})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Shutdown(context.Background()); ts.Close() })
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL + "/mcp"
	down.Close()
	notMCP := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notMCP.Close)
	entry := func(url, token string) string {
		e, _ := urlEntry{url: url, token: token}.in(client(t, "cursor"))
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"tairseach": e}})
		return string(b)
	}
	tests := []struct {
		name, config string
		want         check
	}{
		{"the bridge answers", entry(ts.URL+"/mcp", "s3cret"), check{statusOK, "reaches " + ts.URL + "/mcp (tairseach-mcp " + version() + ")", ""}},
		{"no token", entry(ts.URL+"/mcp", ""), check{statusFail, "wants a token, and the entry has none", "--url " + ts.URL + "/mcp --force"}},
		{"a wrong token", entry(ts.URL+"/mcp", "wrong"), check{statusFail, "refuses the entry's token", "TAIRSEACH_AUTH_TOKEN"}},
		{"nothing there", entry(downURL, ""), check{statusFail, "nothing answers at " + downURL, "tairseach-mcp --transport http"}},
		{"not an MCP bridge", entry(notMCP.URL+"/mcp", ""), check{statusFail, "does not answer as an MCP bridge (404 Not Found)", "check the URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMachine(t, "linux", nil)
			writeFile(t, installed(t, m, client(t, "cursor")), tt.config, 0o600)
			rs := checkClients(t.Context(), m, "/opt/bin/tairseach-mcp", "tairseach")
			if len(rs) != 1 {
				t.Fatalf("got %+v", rs)
			}
			assertResult(t, rs[0], tt.want)
			if strings.Contains(rs[0].Message+rs[0].Fix, "s3cret") {
				t.Errorf("the result tells the token: %+v", rs[0])
			}
		})
	}
}

// noTools is a tool provider without tools.
type noTools struct{}

func (noTools) Tools() *protocol.ToolSet { return protocol.NewToolSet(nil) }
func (noTools) CallTool(context.Context, *protocol.Call, *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return nil, protocol.ErrInvalidParams
}
