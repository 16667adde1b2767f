package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// twinsManifest has two tools that any request for "twin" finds with the
// same score, and one that "lead twin" finds well ahead of them.
const twinsManifest = `{"id":"x","tools":[
 {"name":"x.first","description":"twin","inputSchema":{"type":"object"}},
 {"name":"x.second","description":"twin","inputSchema":{"type":"object"}},
 {"name":"x.lead","description":"twin lead","inputSchema":{"type":"object"}}
],"implementation":{"methods":{"x.first":"x.first","x.second":"x.second","x.lead":"x.lead"}}}`

func twins(t *testing.T) (*Search, *recorder) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x.json"), twinsManifest)
	rec := &recorder{}
	be := &fakeBackend{fn: func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return jsontext.Value(`{}`), nil
	}}
	return NewSearch(New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be, CallTimeout: time.Minute, Audit: rec})), rec
}

// writeLog writes entries to a new audit log and returns its path.
func writeLog(t *testing.T, entries ...audit.Entry) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("not an entry\n")
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	writeFile(t, path, b.String())
	return path
}

func findNames(t *testing.T, s *Search, query string) []string {
	t.Helper()
	return foundNames(t, searchCall(t, s, "t_find_tools", fmt.Sprintf(`{"query":%q}`, query)))
}

func TestSearchLearnsFromTheAuditLog(t *testing.T) {
	s, _ := twins(t)
	if got := findNames(t, s, "twin"); !slices.Equal(got[:2], []string{"t_x_first", "t_x_second"}) {
		t.Fatalf("without learning: %v, want the docs' order", got)
	}
	called := func(name string) audit.Entry {
		return audit.Entry{Kind: audit.KindTool, PID: 7, Session: "s", Name: name, ManifestName: strings.ReplaceAll(name[2:], "_", "."), Method: "m", Outcome: "ok"}
	}
	path := writeLog(t,
		audit.Entry{Kind: audit.KindTool, PID: 7, Session: "s", Name: "t_find_tools", ManifestName: "find_tools", Outcome: "ok", Found: []string{"t_x_second"}},
		called("t_x_second"),
		called("t_x_first"),
	)
	if err := s.Learn(path); err != nil {
		t.Fatal(err)
	}
	// second was called as often as first, and once right after a find.
	if got := findNames(t, s, "twin"); !slices.Equal(got[:2], []string{"t_x_second", "t_x_first"}) {
		t.Errorf("learnt: %v, want t_x_second first", got)
	}
	if got := findNames(t, s, "twin lead"); got[0] != "t_x_lead" {
		t.Errorf("a clear lead: %v, want t_x_lead first whatever was called", got)
	}
}

// A bridge that learns counts its own calls as they are recorded.
func TestSearchLearnsFromItsOwnCalls(t *testing.T) {
	s, rec := twins(t)
	if err := s.Learn(filepath.Join(t.TempDir(), "none.log")); err != nil {
		t.Fatalf("a log not written yet: %v", err)
	}
	searchCall(t, s, "t_find_tools", `{"query":"twin"}`)
	for range 2 {
		searchCall(t, s, "t_call_tool", `{"name":"t_x_second","arguments":{}}`)
	}
	if got := findNames(t, s, "twin"); got[0] != "t_x_second" {
		t.Errorf("after calls of t_x_second: %v, want it first", got)
	}
	// The find_tools entries name the tools found, never the request.
	es := rec.take()
	if len(es) != 4 || !slices.Equal(es[0].Found, []string{"t_x_first", "t_x_second", "t_x_lead"}) || es[0].Args != nil {
		t.Errorf("entries %+v", es)
	}
}

// The prior is bounded in memory and the same for the same entries.
func TestUsageIsBoundedAndDeterministic(t *testing.T) {
	var entries []audit.Entry
	for i := range learnTools + 10 {
		name := fmt.Sprintf("t_%d", i%(learnTools+5))
		entries = append(entries,
			audit.Entry{Kind: audit.KindTool, Session: fmt.Sprint(i), Name: "t_find_tools", ManifestName: "find_tools", Outcome: "ok", Found: []string{name}},
			audit.Entry{Kind: audit.KindTool, Session: fmt.Sprint(i), Name: name, Method: "m", Outcome: "ok"})
	}
	a, b := newUsage(), newUsage()
	for _, u := range []*usage{a, b} {
		for i := range entries {
			e := entries[i]
			u.learn(&e)
		}
	}
	if len(a.weight) != learnTools || len(a.found) != learnSessions || len(a.sessions) != learnSessions {
		t.Errorf("%d tools, %d sessions kept", len(a.weight), len(a.found))
	}
	for _, name := range []string{"t_0", "t_5", "t_4100"} {
		if a.prior(name) != b.prior(name) || a.prior(name) < 0 || a.prior(name) > 1 {
			t.Errorf("prior(%s) = %v and %v", name, a.prior(name), b.prior(name))
		}
	}
	if a.prior("t_0") != 1 || a.prior("t_4100") != 0 {
		t.Errorf("prior(t_0) = %v, prior(t_4100) = %v: want the most called 1, one never counted 0", a.prior("t_0"), a.prior("t_4100"))
	}
}

// Only the end of a long log is read, from a whole line on.
func TestUsageReadsTheEndOfTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	old, _ := json.Marshal(audit.Entry{Kind: audit.KindTool, Name: "t_old", Method: "m", Outcome: "ok"})
	recent, _ := json.Marshal(audit.Entry{Kind: audit.KindTool, Name: "t_recent", Method: "m", Outcome: "ok"})
	var b []byte
	for len(b) < learnBytes+len(recent) {
		b = append(append(b, old...), '\n')
	}
	writeFile(t, path+".1", string(b))
	writeFile(t, path, string(recent)+"\n")
	u := newUsage()
	if err := u.read(path); err != nil {
		t.Fatal(err)
	}
	if u.weight["t_recent"] != 1 || u.weight["t_old"] == 0 || u.weight["t_old"] > learnBytes/float64(len(old)) {
		t.Errorf("weights %v", u.weight)
	}
	if err := os.Chmod(path, 0); err == nil && os.Getuid() != 0 {
		if err := newUsage().read(path); err == nil {
			t.Error("an unreadable log: no error")
		}
	}
}
