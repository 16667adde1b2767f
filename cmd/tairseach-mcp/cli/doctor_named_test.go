package cli

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// doctor names the clients whose policy hides every tool, and those no
// installed config uses: a stdio entry with --client NAME, or a URL
// entry with NAME's token, uses NAME.
func TestDoctorChecksTheNamedClients(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.json"), `{"id":"notes","tools":[{"name":"notes.list","description":"List.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}],"implementation":{"methods":{"notes.list":"notes.list"}}}`, 0o644)
	reg := registry.New(registry.Options{Dirs: []string{dir}, Prefix: "t"})
	path := filepath.Join(t.TempDir(), "clients.json")
	f := &clients.File{Clients: map[string]*clients.Entry{}}
	tokens := map[string]string{}
	for name, p := range map[string]clients.Policy{
		"reader": {ReadOnly: true}, "blind": {Include: []string{"mail.*"}}, "unused": {}, "url": {},
	} {
		token, err := f.Add(name, p, fixedNow)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = token
	}
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	m := testMachine(t, "linux", nil)
	for _, tc := range []struct {
		client string
		entry  clientconfig.Entry
	}{
		{"cursor", clientconfig.CommandEntry{Command: "/bin/tairseach-mcp", Args: []string{"--client=reader"}}},
		{"claude-code", clientconfig.CommandEntry{Command: "/bin/tairseach-mcp", Args: []string{"--read-only", "--client", "blind"}}},
		{"windsurf", clientconfig.NewURLEntry(bridgeURL, tokens["url"])},
	} {
		c := client(t, tc.client)
		installed(t, m, c)
		if err := clientconfig.Install(io.Discard, m, c, tc.entry, clientconfig.Options{Name: "tairseach"}); err != nil {
			t.Fatal(err)
		}
	}
	rs := checkNamedClients(path, "", reg, m, "tairseach")
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3: %+v", len(rs), rs)
	}
	assertResult(t, rs[0], check{statusOK, "4 clients", ""})
	assertResult(t, rs[1], check{statusWarn, "the policy of blind hides every tool", "widen"})
	assertResult(t, rs[2], check{statusInfo, `no installed config uses unused (as the entry "tairseach")`, "install CLIENT --client NAME"})

	assertResult(t, checkNamedClients(path, "nobody", reg, m, "tairseach")[0], check{statusFail, "--client nobody: " + path + " has no such client", "clients add nobody"})
	if rs := checkNamedClients(filepath.Join(dir, "none.json"), "", reg, m, "tairseach"); rs != nil {
		t.Errorf("without a clients file: %+v, want nothing said", rs)
	}
	writeFile(t, path, strings.Replace(readFile(t, path), `"readOnly": true`, `"readOnly": "yes"`, 1), 0o600)
	assertResult(t, checkNamedClients(path, "", reg, m, "tairseach")[0], check{statusFail, "clients.reader.policy.readOnly", "validate --clients"})
}
