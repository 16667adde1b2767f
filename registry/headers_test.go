package registry

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// regionManifest is a manifest of tools sql.run, whose region property
// has the x-mcp-header header and the type typ, and sql.plain.
func regionManifest(header, typ string) string {
	return `{"id":"sql","tools":[` +
		`{"name":"sql.run","description":"Runs SQL.","inputSchema":{"type":"object","properties":{"region":{"type":"` + typ + `","x-mcp-header":"` + header + `"},"query":{"type":"string"}}}},` +
		`{"name":"sql.plain","description":"Plain.","inputSchema":{"type":"object"}}],` +
		`"implementation":{"methods":{"sql.run":"sql.run","sql.plain":"sql.plain"}}}`
}

func TestParamHeadersFollowTheManifests(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sql.json")
	writeFile(t, path, regionManifest("Region", "string"))
	var reported []string
	var changes int
	r := New(Options{Dirs: []string{dir}, Prefix: "p",
		Report:   func(_ zerolog.Level, msg string) { reported = append(reported, msg) },
		OnChange: func(*Snapshot, Changes) { changes++ },
	})
	want := func(step, header string) {
		t.Helper()
		tools := r.Snapshot().Tools()
		if diff := cmp.Diff([]protocol.ParamHeader{{Name: header, Path: []string{"region"}}}, tools.ParamHeaders("p_sql_run")); diff != "" {
			t.Errorf("%s: p_sql_run's headers (-want +got):\n%s", step, diff)
		}
		if got := tools.ParamHeaders("p_sql_plain"); got != nil {
			t.Errorf("%s: p_sql_plain has headers %v", step, got)
		}
	}
	want("loaded", "Region")

	writeFile(t, path, regionManifest("Zone", "string"))
	r.Reload()
	want("a new header name", "Zone")
	if changes != 1 {
		t.Errorf("a new header name: OnChange called %d times, want once: clients must list again", changes)
	}

	reported = nil
	writeFile(t, path, regionManifest("Zone", "number"))
	r.Reload()
	want("a header that turns invalid keeps the last good version", "Zone")
	if all := strings.Join(reported, "\n"); !strings.Contains(all, `sql.json:tools[0].inputSchema.properties.region.x-mcp-header: error: x-mcp-header "Zone" on argument region is on a "number"`) ||
		!strings.Contains(all, "keeping the tools of the last good version") {
		t.Errorf("reports:\n%s", all)
	}

	fresh := filepath.Join(dir, "fresh.json")
	writeFile(t, fresh, strings.ReplaceAll(regionManifest("A B", "string"), "sql", "new"))
	s := r.Reload()
	if got := names(s); got != "p_new_plain,p_sql_run,p_sql_plain" {
		t.Errorf("a new file with an invalid header serves %s, want its other tool only", got)
	}
	if !strings.Contains(problemStrings(s.Problems), `fresh.json:tools[0].inputSchema.properties.region.x-mcp-header: error: x-mcp-header "A B" on argument region is not an HTTP token`) {
		t.Errorf("problems:\n%s", problemStrings(s.Problems))
	}
}
