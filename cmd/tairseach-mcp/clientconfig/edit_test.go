package clientconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// testMachine is a Machine with the given OS's layout in a temporary
// home; on Windows APPDATA points inside it.
func testMachine(t *testing.T, goos string, vars map[string]string) Machine {
	t.Helper()
	home := t.TempDir()
	all := map[string]string{}
	if goos == "windows" {
		all["APPDATA"] = filepath.Join(home, "AppData", "Roaming")
	}
	for k, v := range vars {
		all[k] = strings.ReplaceAll(v, "$HOME", home)
	}
	return Machine{GOOS: goos, Home: home, Getenv: func(k string) string { return all[k] }}
}

func client(t *testing.T, name string) Client {
	t.Helper()
	for _, c := range clients {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no client %q", name)
	return Client{}
}

// installed makes the client look installed: its folder exists.
func installed(t *testing.T, m Machine, c Client) string {
	t.Helper()
	dir, file := c.paths(m)
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

// dirNames lists a folder, to show that no temporary file was left.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

var testEntry = CommandEntry{Command: "/opt/bin/tairseach-mcp", Args: []string{"--socket=/run/t.sock"}}

func install(t *testing.T, m Machine, c Client, o Options) (string, error) {
	t.Helper()
	if o.Name == "" {
		o.Name = "tairseach"
	}
	var out bytes.Buffer
	err := Install(&out, m, c, testEntry, o)
	return out.String(), err
}

func uninstall(t *testing.T, m Machine, c Client, o Options) (string, error) {
	t.Helper()
	if o.Name == "" {
		o.Name = "tairseach"
	}
	var out bytes.Buffer
	err := Uninstall(&out, m, c, o)
	return out.String(), err
}

func TestInstallWritesEachClientsDocumentedFileAndFormat(t *testing.T) {
	stdio := map[string]any{"command": testEntry.Command, "args": []any{"--socket=/run/t.sock"}}
	typed := map[string]any{"type": "stdio", "command": testEntry.Command, "args": []any{"--socket=/run/t.sock"}}
	tests := []struct {
		client, goos string
		vars         map[string]string
		path         string // under the home folder
		want         map[string]any
	}{
		{"claude-desktop", "darwin", nil, "Library/Application Support/Claude/claude_desktop_config.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"claude-desktop", "windows", nil, "AppData/Roaming/Claude/claude_desktop_config.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"claude-desktop", "linux", nil, ".config/Claude/claude_desktop_config.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"claude-desktop", "linux", map[string]string{"XDG_CONFIG_HOME": "$HOME/xdg"}, "xdg/Claude/claude_desktop_config.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"claude-code", "darwin", nil, ".claude.json", map[string]any{"mcpServers": map[string]any{"tairseach": typed}}},
		{"claude-code", "windows", nil, ".claude.json", map[string]any{"mcpServers": map[string]any{"tairseach": typed}}},
		{"claude-code", "linux", nil, ".claude.json", map[string]any{"mcpServers": map[string]any{"tairseach": typed}}},
		{"claude-code", "linux", map[string]string{"CLAUDE_CONFIG_DIR": "$HOME/cc"}, "cc/.claude.json", map[string]any{"mcpServers": map[string]any{"tairseach": typed}}},
		{"cursor", "darwin", nil, ".cursor/mcp.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"cursor", "windows", nil, ".cursor/mcp.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"cursor", "linux", nil, ".cursor/mcp.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"vscode", "darwin", nil, "Library/Application Support/Code/User/mcp.json", map[string]any{"servers": map[string]any{"tairseach": typed}}},
		{"vscode", "windows", nil, "AppData/Roaming/Code/User/mcp.json", map[string]any{"servers": map[string]any{"tairseach": typed}}},
		{"vscode", "linux", nil, ".config/Code/User/mcp.json", map[string]any{"servers": map[string]any{"tairseach": typed}}},
		{"windsurf", "darwin", nil, ".codeium/windsurf/mcp_config.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"windsurf", "windows", nil, ".codeium/windsurf/mcp_config.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
		{"windsurf", "linux", nil, ".codeium/windsurf/mcp_config.json", map[string]any{"mcpServers": map[string]any{"tairseach": stdio}}},
	}
	for _, tt := range tests {
		t.Run(tt.client+" on "+tt.goos+" "+tt.path, func(t *testing.T) {
			m := testMachine(t, tt.goos, tt.vars)
			c := client(t, tt.client)
			file := installed(t, m, c)
			if want := filepath.Join(m.Home, tt.path); file != want {
				t.Fatalf("config file %s, want %s", file, want)
			}
			out, err := install(t, m, c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "Added \"tairseach\" to "+c.Title+": "+file+".\n") || strings.Contains(out, ".bak") {
				t.Errorf("output:\n%s", out)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(readFile(t, file)), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
				t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
			}
			if names := dirNames(t, filepath.Dir(file)); slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".tmp") }) {
				t.Errorf("temporary file left: %v", names)
			}
		})
	}
}

func TestInstallMergesKeepingEverythingElse(t *testing.T) {
	m := testMachine(t, "linux", nil)
	c := client(t, "vscode")
	file := installed(t, m, c)
	old := "{\n\t\"servers\": {\n\t\t\"zeta\": {\"type\": \"http\", \"url\": \"https://z/\\u00e9\"},\n\t\t\"alpha\": {\"command\": \"a\", \"x-unknown\": [1, 2]}\n\t},\n\t\"inputs\": [],\n\t\"a-later-member\": {\"b\": 1, \"a\": 2}\n}\n"
	writeFile(t, file, old, 0o640)
	out, err := install(t, m, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
	"servers": {
		"zeta": {
			"type": "http",
			"url": "https://z/\u00e9"
		},
		"alpha": {
			"command": "a",
			"x-unknown": [
				1,
				2
			]
		},
		"tairseach": {
			"type": "stdio",
			"command": "/opt/bin/tairseach-mcp",
			"args": [
				"--socket=/run/t.sock"
			]
		}
	},
	"inputs": [],
	"a-later-member": {
		"b": 1,
		"a": 2
	}
}
`
	if diff := cmp.Diff(want, readFile(t, file)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if got := readFile(t, file+".bak"); got != old {
		t.Errorf("backup holds %q, want the previous file", got)
	}
	if !strings.Contains(out, "previous file kept as "+file+".bak") {
		t.Errorf("output does not name the backup:\n%s", out)
	}
	for _, p := range []string{file, file + ".bak"} {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("%s mode %v, want the old file's 0640", p, fi.Mode().Perm())
		}
	}
	if diff := cmp.Diff([]string{"mcp.json", "mcp.json.bak"}, dirNames(t, filepath.Dir(file))); diff != "" {
		t.Errorf("folder (-want +got):\n%s", diff)
	}
}

func TestInstallTwiceChangesNothing(t *testing.T) {
	m := testMachine(t, "darwin", nil)
	c := client(t, "claude-desktop")
	file := installed(t, m, c)
	if _, err := install(t, m, c, Options{}); err != nil {
		t.Fatal(err)
	}
	first := readFile(t, file)
	out, err := install(t, m, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "nothing to change") {
		t.Errorf("second install says:\n%s", out)
	}
	if readFile(t, file) != first {
		t.Error("second install changed the file")
	}
	if diff := cmp.Diff([]string{"claude_desktop_config.json"}, dirNames(t, filepath.Dir(file))); diff != "" {
		t.Errorf("second install wrote something (-want +got):\n%s", diff)
	}
}

func TestInstallReplacesADifferentServerOnlyWithForce(t *testing.T) {
	m := testMachine(t, "linux", nil)
	c := client(t, "cursor")
	file := installed(t, m, c)
	old := `{"mcpServers": {"tairseach": {"command": "/old/tairseach-mcp", "args": [], "env": {"K": "v"}}, "other": {"command": "o"}}}`
	writeFile(t, file, old, 0o600)
	_, err := install(t, m, c, Options{})
	if err == nil || !strings.Contains(err.Error(), "different server \"tairseach\"") || !strings.Contains(err.Error(), "/old/tairseach-mcp") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v, want a refusal naming --force", err)
	}
	if readFile(t, file) != old {
		t.Fatal("a refused install changed the file")
	}
	out, err := install(t, m, c, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Replaced \"tairseach\" in Cursor") {
		t.Errorf("output:\n%s", out)
	}
	var got map[string]any
	json.Unmarshal([]byte(readFile(t, file)), &got)
	want := map[string]any{"mcpServers": map[string]any{
		"tairseach": map[string]any{"command": testEntry.Command, "args": []any{"--socket=/run/t.sock"}},
		"other":     map[string]any{"command": "o"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	// Another name sits next to the first.
	if _, err := install(t, m, c, Options{Name: "tairseach-2"}); err != nil {
		t.Fatal(err)
	}
}

func TestDryRunShowsTheChangeAndWritesNothing(t *testing.T) {
	m := testMachine(t, "linux", nil)
	c := client(t, "windsurf")
	file := installed(t, m, c)
	old := `{"mcpServers": {"tairseach": {"command": "/old", "args": []}}}`
	writeFile(t, file, old, 0o644)
	out, err := install(t, m, c, Options{DryRun: true, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `Would change ` + file + `:
- "tairseach": {
-   "command": "/old",
-   "args": []
- }
+ "tairseach": {
+   "command": "/opt/bin/tairseach-mcp",
+   "args": [
+     "--socket=/run/t.sock"
+   ]
+ }
Nothing written (--dry-run).
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	out, err = uninstall(t, m, c, Options{DryRun: true})
	if err != nil || !strings.Contains(out, `- "tairseach": {`) || strings.Contains(out, "+ ") {
		t.Errorf("uninstall --dry-run: %v\n%s", err, out)
	}
	if readFile(t, file) != old || len(dirNames(t, filepath.Dir(file))) != 1 {
		t.Error("--dry-run wrote something")
	}
}

func TestFilesThatAreNotPlainJSONAreRefusedUntouched(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"line comments", "{\n  // mine\n  \"servers\": {}\n}", "has comments (line 2)"},
		{"a comment first", "// mine\n{}", "has comments (line 1)"},
		{"block comments", "{\n  \"servers\": {\n    /* off */\n  }\n}", "has comments (line 3)"},
		{"a trailing comma", "{\n  \"servers\": {},\n}", "is not valid JSON (line 2"},
		{"no JSON at all", "servers = {}", "is not valid JSON (line 1"},
		{"a truncated file", `{"servers": {"a": {`, "is not valid JSON"},
		{"an array", `[]`, "does not hold a JSON object"},
		{"servers that are not an object", `{"servers": []}`, `"servers" is not an object of servers`},
		{"a repeated name", `{"servers": {}, "servers": {}}`, "duplicate object member name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMachine(t, "linux", nil)
			c := client(t, "vscode")
			file := installed(t, m, c)
			writeFile(t, file, tt.data, 0o644)
			for _, run := range []func(*testing.T, Machine, Client, Options) (string, error){install, uninstall} {
				_, err := run(t, m, c, Options{Force: true})
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), file) {
					t.Errorf("err = %v, want %q naming the file", err, tt.want)
				}
			}
			if readFile(t, file) != tt.data || len(dirNames(t, filepath.Dir(file))) != 1 {
				t.Error("the file was changed")
			}
		})
	}
}

func TestUninstallRemovesOnlyTheBridge(t *testing.T) {
	m := testMachine(t, "windows", nil)
	c := client(t, "claude-code")
	installed(t, m, c)
	_, file := c.paths(m)
	out, err := uninstall(t, m, c, Options{})
	if err != nil || !strings.Contains(out, "Claude Code has no server \"tairseach\" in "+file+": nothing to remove.") {
		t.Errorf("no file: %v\n%s", err, out)
	}
	old := `{"numStartups": 3, "mcpServers": {"a": {"type": "stdio", "command": "a"}, "tairseach": {"type": "stdio", "command": "t"}, "b": {}}, "projects": {}}`
	writeFile(t, file, old, 0o600)
	out, err = uninstall(t, m, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Removed \"tairseach\" from Claude Code: "+file+" (previous file kept as "+file+".bak).") {
		t.Errorf("output:\n%s", out)
	}
	want := `{
  "numStartups": 3,
  "mcpServers": {
    "a": {
      "type": "stdio",
      "command": "a"
    },
    "b": {}
  },
  "projects": {}
}
`
	if diff := cmp.Diff(want, readFile(t, file)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if readFile(t, file+".bak") != old {
		t.Error("no backup of the previous file")
	}
	if out, _ := uninstall(t, m, c, Options{}); !strings.Contains(out, "nothing to remove") {
		t.Errorf("second uninstall: %s", out)
	}
}

func TestInstallNeedsTheClientOrForce(t *testing.T) {
	m := testMachine(t, "linux", nil)
	c := client(t, "windsurf")
	dir, file := c.paths(m)
	_, err := install(t, m, c, Options{})
	if err == nil || !strings.Contains(err.Error(), "Windsurf not found: "+dir+" does not exist") {
		t.Fatalf("err = %v", err)
	}
	if _, err := install(t, m, c, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
}

func TestInstallWritesThroughASymbolicLink(t *testing.T) {
	m := testMachine(t, "linux", nil)
	c := client(t, "cursor")
	file := installed(t, m, c)
	target := filepath.Join(m.Home, "dotfiles", "mcp.json")
	writeFile(t, target, `{"mcpServers": {}}`, 0o644)
	if err := os.Symlink(target, file); err != nil {
		t.Fatal(err)
	}
	if _, err := install(t, m, c, Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if !strings.Contains(readFile(t, target), testEntry.Command) {
		t.Error("the link's target was not updated")
	}
}

func TestListShowsClientsFoundAndTheirEntries(t *testing.T) {
	m := testMachine(t, "linux", nil)
	exe := filepath.Join(m.Home, "bin", "tairseach-mcp")
	other := filepath.Join(m.Home, "bin", "other-copy")
	writeFile(t, exe, "", 0o755)
	writeFile(t, other, "", 0o755)
	link := filepath.Join(m.Home, "bin", "link")
	os.Symlink(exe, link)
	files := map[string]string{}
	for _, c := range clients {
		if c.Name != "windsurf" {
			files[c.Name] = installed(t, m, c)
		}
	}
	writeFile(t, files["claude-desktop"], `{"mcpServers": {"tairseach": {"command": "`+link+`"}}}`, 0o600)
	writeFile(t, files["claude-code"], `{"mcpServers": {"tairseach": {"command": "/gone/tairseach-mcp"}}}`, 0o600)
	writeFile(t, files["cursor"], `{"mcpServers": {"tairseach": {"command": "`+other+`"}}}`, 0o600)
	writeFile(t, files["vscode"], `{"servers": {}} // x`, 0o600)
	var out bytes.Buffer
	if err := List(&out, m, exe, "tairseach"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"claude-desktop  " + files["claude-desktop"],
		"installed (this binary)\n",
		"installed, but its binary is missing: /gone/tairseach-mcp\n",
		"installed, another binary: " + other + "\n",
		"unreadable: " + files["vscode"] + " has comments",
		"4 clients found; not found: windsurf.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	List(&out, testMachine(t, "darwin", nil), exe, "tairseach")
	if got := out.String(); got != "No clients found (looked for "+strings.Join(Names(), ", ")+").\n" {
		t.Errorf("nothing installed: %q", got)
	}
}

// FuzzJSONObject checks that a file's object comes back as it was read,
// but for whitespace.
func FuzzJSONObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"b":1,"a":{"c":[1,"\u00e9\/",null]}}`, `{"a":1,"a":2}`, `[]`, `{"a":`, "{\n // c\n}", `{"a":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var o jsonObject
		if json.Unmarshal(data, &o) != nil {
			return
		}
		got, err := json.Marshal(o, jsontext.PreserveRawStrings(true))
		if err != nil {
			t.Fatal(err)
		}
		want := jsontext.Value(slices.Clone(data))
		if err := want.Compact(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("read %s, wrote %s", want, got)
		}
	})
}

// An entry that names the bridge bare, as found on PATH, is this binary
// to install --list as it is to doctor.
func TestListFindsABareCommandOnPath(t *testing.T) {
	m := testMachine(t, "linux", nil)
	exe := filepath.Join(m.Home, "bin", "tairseach-mcp")
	writeFile(t, exe, "", 0o755)
	t.Setenv("PATH", filepath.Dir(exe))
	c := client(t, "cursor")
	writeFile(t, installed(t, m, c), `{"mcpServers": {"tairseach": {"command": "tairseach-mcp"}}}`, 0o600)
	var out bytes.Buffer
	if err := List(&out, m, exe, "tairseach"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "installed (this binary)\n") {
		t.Errorf("a bare command on PATH:\n%s", out.String())
	}
}
