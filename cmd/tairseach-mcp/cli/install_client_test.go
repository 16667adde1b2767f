package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// install --client NAME writes an entry of the named client: over stdio
// the bridge's --client (and --clients when given); with --url a new
// token of the client's, after asking, the file then holding its hash.
func TestInstallANamedClient(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	os.MkdirAll(filepath.Join(home, ".codeium", "windsurf"), 0o700)
	path := filepath.Join(t.TempDir(), "clients.json")
	f := &clients.File{Clients: map[string]*clients.Entry{}}
	old, err := f.Add("cursor", clients.Policy{ReadOnly: true}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	install := func(args ...string) (int, string, string) {
		e, out, errb := testEnv(map[string]string{"HOME": home})
		code := run(context.Background(), e, append([]string{"install"}, args...))
		return code, out.String(), errb.String()
	}
	entryOf := func(file string) map[string]any {
		var got map[string]map[string]map[string]any
		json.Unmarshal([]byte(readFile(t, file)), &got)
		return got["mcpServers"]["tairseach"]
	}

	if code, _, errOut := install("cursor", "--clients", path, "--client", "cursor"); code != exitOK {
		t.Fatalf("install cursor --client cursor: %d %s", code, errOut)
	}
	var args []string
	for _, a := range entryOf(filepath.Join(home, ".cursor", "mcp.json"))["args"].([]any) {
		args = append(args, a.(string))
	}
	if !slices.Contains(args, "--client=cursor") || !slices.Contains(args, "--clients="+path) {
		t.Errorf("the stdio entry's args %q, want --client=cursor and --clients", args)
	}
	if code, _, errOut := install("cursor", "--clients", path, "--client", "nobody", "--force"); code != exitError || !strings.Contains(errOut, "has no such client") {
		t.Errorf("install --client of no such client: %d %s", code, errOut)
	}

	windsurf := filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
	url := []string{"windsurf", "--url", bridgeURL, "--clients", path, "--client", "cursor"}
	if code, _, errOut := install(url...); code != exitError || !strings.Contains(errOut, "pass --yes") {
		t.Errorf("install --url --client in a script, without --yes: %d %s", code, errOut)
	}
	if code, out, _ := install(append(url, "--dry-run")...); code != exitOK || !strings.Contains(out, "Would replace the token of client cursor") {
		t.Errorf("--dry-run: %d %s", code, out)
	}
	if f, _ := clients.Read(path); !f.Clients["cursor"].Token.Matches(old) {
		t.Fatal("the token was replaced without --yes, or by --dry-run")
	}
	if code, out, errOut := install(append(url, "--yes")...); code != exitOK || !strings.Contains(out, "Replaced the token of client cursor") {
		t.Fatalf("install --url --client --yes: %d %s %s", code, out, errOut)
	}
	headers, _ := entryOf(windsurf)["headers"].(map[string]any)
	auth, _ := headers["Authorization"].(string)
	token, ok := strings.CutPrefix(auth, "Bearer ")
	f, _ = clients.Read(path)
	if !ok || !f.Clients["cursor"].Token.Matches(token) || f.Clients["cursor"].Token.Matches(old) {
		t.Errorf("the entry's token %q is not cursor's new one", auth)
	}
	if fi, _ := os.Stat(windsurf); fi.Mode().Perm() != 0o600 {
		t.Errorf("the config holding the token is %v", fi.Mode())
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("owner\n"), 0o600)
	if code, _, errOut := install(append(url, "--yes", "--auth-token-file", tokenFile)...); code != exitUsage || !strings.Contains(errOut, "give one of them") {
		t.Errorf("--client with --auth-token-file: %d %s", code, errOut)
	}
}
