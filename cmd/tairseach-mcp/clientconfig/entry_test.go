package clientconfig

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

const bridgeURL = "http://127.0.0.1:8411/mcp"

func installURLEntry(t *testing.T, m Machine, c Client, token string, o Options) (string, error) {
	t.Helper()
	if o.Name == "" {
		o.Name = "tairseach"
	}
	var out bytes.Buffer
	err := Install(&out, m, c, NewURLEntry(bridgeURL, token), o)
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
			if _, err := installURLEntry(t, m, c, tt.token, Options{}); err != nil {
				t.Fatal(err)
			}
			var got map[string]map[string]any
			if err := json.Unmarshal([]byte(readFile(t, file)), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got[c.key]["tairseach"]); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
			out, err := installURLEntry(t, m, c, tt.token, Options{})
			if err != nil || !strings.Contains(out, "nothing to change") {
				t.Errorf("the same install again: %v\n%s", err, out)
			}
			var list bytes.Buffer
			List(&list, m, "/opt/bin/tairseach-mcp", "tairseach")
			if !strings.Contains(list.String(), "installed, reaches "+bridgeURL) {
				t.Errorf("install --list:\n%s", list.String())
			}
		})
	}
	t.Run("claude-desktop", func(t *testing.T) {
		m := testMachine(t, "darwin", nil)
		c := client(t, "claude-desktop")
		file := installed(t, m, c)
		_, err := installURLEntry(t, m, c, "", Options{})
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
	out, err := installURLEntry(t, m, c, "s3cret", Options{DryRun: true})
	if err != nil || strings.Contains(out, "s3cret") || !strings.Contains(out, `"Authorization": "Bearer …"`) {
		t.Errorf("--dry-run: %v\n%s", err, out)
	}
	if out, err = installURLEntry(t, m, c, "s3cret", Options{}); err != nil {
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
	_, err = installURLEntry(t, m, c, "n3w", Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("another token: %v", err)
	}
	// A command entry of the same name is another server: --force
	// replaces it, and back.
	if _, err := install(t, m, c, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := installURLEntry(t, m, c, "", Options{}); err == nil {
		t.Error("a URL entry replaced a command entry without --force")
	}
}
