package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
)

const bridgeURL = "http://127.0.0.1:8411/mcp"

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
		m := testMachine(t, "linux", nil)
		c := client(t, "cursor")
		if err := clientconfig.Install(io.Discard, m, c, clientconfig.NewURLEntry(url, token), clientconfig.Options{Name: "tairseach", Force: true}); err != nil {
			t.Fatal(err)
		}
		_, file := c.Paths(m)
		return readFile(t, file)
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
