package cli

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// docsDir is the repository's docs folder.
var docsDir = filepath.Join("..", "..", "..", "docs")

// The limits table of docs/http.md names every limit of the HTTP bridge
// with the flag, variable and default the command line has.
func TestHTTPDocsNameEveryLimit(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "http.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n## Limits\n")
	section, _, _ = strings.Cut(section, "\n## ")
	fs := newRootCmd(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		getenv: func(string) (string, bool) { return "", false }}).Flags()
	documented := map[string]bool{}
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`--") {
			continue
		}
		flag := strings.Trim(strings.TrimSpace(cells[1]), "`-")
		variable := strings.Trim(strings.TrimSpace(cells[2]), "`")
		def := strings.Trim(strings.TrimSpace(cells[3]), "`")
		documented[flag] = true
		f := fs.Lookup(flag)
		if f == nil {
			t.Errorf("docs/http.md names --%s, which is no flag", flag)
			continue
		}
		if want := envOf(flag); variable != want {
			t.Errorf("--%s: docs/http.md says variable %s, want %s", flag, variable, want)
		}
		if err := f.Value.Set(def); err != nil || f.Value.String() != f.DefValue {
			t.Errorf("--%s: docs/http.md says default %q, the flag's is %q (%v)", flag, def, f.DefValue, err)
		}
	}
	limits := []string{"max-in-flight", "max-held-bytes"}
	for _, s := range settings {
		if s.group == httpFlags && !slices.Contains([]string{"transport", "listen", "allowed-origins", "allowed-hosts", "auth-token-file", "tls-cert", "tls-key", "insecure-http"}, s.flag) {
			limits = append(limits, s.flag)
		}
	}
	for _, flag := range limits {
		if !documented[flag] {
			t.Errorf("the limits of docs/http.md do not name --%s", flag)
		}
	}
}

func envOf(flag string) string {
	s, _ := settingOf(flag)
	return s.env
}

// The service files of docs/service run the bridge over HTTP with flags
// it accepts.
func TestServiceFilesRunTheHTTPBridge(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join(docsDir, "service", "tairseach-mcp.service"))
	if err != nil {
		t.Fatal(err)
	}
	var execStart []string
	for line := range strings.Lines(string(unit)) {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			execStart = strings.Fields(rest)
		}
	}
	f, err := os.Open(filepath.Join(docsDir, "service", "com.tairseach.mcp.plist"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plist := plistStrings(t, f)
	if plist["Label"][0] != "com.tairseach.mcp" {
		t.Errorf("the plist's Label is %q", plist["Label"])
	}
	for name, argv := range map[string][]string{"the systemd unit": execStart, "the launchd plist": plist["ProgramArguments"]} {
		if len(argv) < 2 || filepath.Base(argv[0]) != "tairseach-mcp" || !slices.Contains(argv, "http") {
			t.Errorf("%s runs %q", name, argv)
			continue
		}
		if err := parseServerArgs(argv[1:]); err != nil {
			t.Errorf("%s: the bridge refuses %q: %v", name, argv[1:], err)
		}
	}
}

// plistStrings returns the strings of each key of a property list's top
// dictionary: a string's, or an array's.
func plistStrings(t *testing.T, r io.Reader) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	dec := xml.NewDecoder(r)
	var key, elem string
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the plist is not XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			elem = tok.Name.Local
		case xml.EndElement:
			depth--
			elem = ""
		case xml.CharData:
			switch {
			case elem == "key" && depth == 3:
				key = string(tok)
			case elem == "string" && depth >= 3:
				out[key] = append(out[key], string(tok))
			}
		}
	}
}

// The example clients file of docs/clients.md is one a bridge reads.
func TestClientsDocsExampleIsAClientsFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n## Named clients")
	_, example, ok := strings.Cut(section, "```json\n")
	example, _, _ = strings.Cut(example, "```")
	if !ok {
		t.Fatal("docs/clients.md has no example clients file")
	}
	path := filepath.Join(t.TempDir(), "clients.json")
	writeFile(t, path, example, 0o600)
	f, err := clients.Read(path)
	if err != nil {
		t.Fatalf("the example: %v", err)
	}
	if len(f.Clients) != 3 {
		t.Errorf("the example has %d clients", len(f.Clients))
	}
}
