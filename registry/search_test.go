package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

func searchCall(t *testing.T, s *Search, name, args string) *protocol.CallToolResult {
	t.Helper()
	res, err := s.CallTool(t.Context(), aCall(), &protocol.CallToolRequest{Name: name, Arguments: []byte(args)})
	if err != nil {
		t.Fatalf("CallTool(%s, %s): %v", name, args, err)
	}
	return res
}

// foundNames decodes a find_tools result, checking that the text and the
// structured content agree.
func foundNames(t *testing.T, res *protocol.CallToolResult) []string {
	t.Helper()
	if res.IsError || string(res.StructuredContent) != resultText(res) {
		t.Fatalf("find_tools result: %+v", res)
	}
	var out struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema jsontext.Value `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range out.Tools {
		if len(tool.InputSchema) == 0 {
			t.Errorf("%s has no inputSchema", tool.Name)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestSearchModeListsTwoToolsThatStayTheSame(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mail.json"), filterManifest)
	r := New(Options{Dirs: []string{dir}, Prefix: "t"})
	s := NewSearch(r)
	list := s.Tools()
	var names []string
	for _, tool := range list.Tools() {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"t_find_tools", "t_call_tool"}) {
		t.Fatalf("tools = %v", names)
	}
	find := list.Tools()[0]
	if !strings.Contains(find.Description, "3 tools in these groups:\n- mail (3)") {
		t.Errorf("find_tools description does not name the groups:\n%s", find.Description)
	}
	writeFile(t, filepath.Join(dir, "notes.json"), manifestJSON("notes", "notes.create"))
	r.Reload()
	if s.Tools() != list {
		t.Error("the listing changed on reload")
	}
	// find_tools searches the current snapshot.
	if got := foundNames(t, searchCall(t, s, "t_find_tools", `{"query":"create a note"}`)); len(got) == 0 || got[0] != "t_notes_create" {
		t.Errorf("found %v after reload, want t_notes_create first", got)
	}
}

func TestFindTools(t *testing.T) {
	r := New(Options{Dirs: catalogueDirs, Prefix: "tairseach"})
	s := NewSearch(r)
	if got := foundNames(t, searchCall(t, s, "tairseach_find_tools", `{"query":"reply to the last email from Ana"}`)); len(got) != 5 || !slices.Contains(got, "tairseach_gmail_reply") {
		t.Errorf("found %v, want five with tairseach_gmail_reply", got)
	}
	if got := foundNames(t, searchCall(t, s, "tairseach_find_tools", `{"query":"email","limit":20}`)); len(got) != 20 {
		t.Errorf("limit 20: found %d", len(got))
	}
	if got := foundNames(t, searchCall(t, s, "tairseach_find_tools", `{"query":"zzyzx"}`)); len(got) != 0 {
		t.Errorf("found %v for nonsense", got)
	}
	for _, args := range []string{`{"query":"email","limit":21}`, `{}`, `{"query":""}`, `{"query":"x","extra":1}`} {
		if res := searchCall(t, s, "tairseach_find_tools", args); !res.IsError || !strings.Contains(resultText(res), "Invalid arguments for tairseach_find_tools") {
			t.Errorf("%s: %+v, want an invalid-arguments result", args, res)
		}
	}
	var out struct {
		Tools []map[string]any `json:"tools"`
	}
	json.Unmarshal(searchCall(t, s, "tairseach_find_tools", `{"query":"delete a note","limit":1}`).StructuredContent, &out)
	want := map[string]any{"name": "tairseach_notes_delete", "title": "Delete note", "description": "", "why": "", "inputSchema": nil,
		"annotations": map[string]any{"title": "Delete note", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}}
	if len(out.Tools) != 1 || out.Tools[0]["name"] != want["name"] || fmt.Sprint(slices.Sorted(maps.Keys(out.Tools[0]))) != fmt.Sprint(slices.Sorted(maps.Keys(want))) ||
		fmt.Sprint(out.Tools[0]["annotations"]) != fmt.Sprint(want["annotations"]) {
		t.Errorf("found %v", out.Tools)
	}
}

func TestCallToolCallsAsADirectCallWould(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "n.json"), schemaManifest)
	be := &fakeBackend{fn: func(_ context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
		if method == "notes.count" {
			return nil, errors.New("boom")
		}
		return jsontext.Value(`{"id":"n1"}`), nil
	}}
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be, Filter: Filter{Exclude: []string{"notes.any"}}})
	s := NewSearch(r)
	for _, tc := range []struct {
		name, args string
	}{
		{"t_notes_create", `{"title":"a"}`},
		{"t_notes_create", `{"bogus":1}`},
		{"t_notes_count", `{}`},
	} {
		direct := call(t, r, tc.name, tc.args)
		via := searchCall(t, s, "t_call_tool", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tc.name, tc.args))
		if resultText(via) != resultText(direct) || via.IsError != direct.IsError || string(via.StructuredContent) != string(direct.StructuredContent) {
			t.Errorf("%s %s: via call_tool %+v, direct %+v", tc.name, tc.args, via, direct)
		}
	}
	if res := searchCall(t, s, "t_call_tool", `{"name":"t_notes_create"}`); !res.IsError || !strings.Contains(resultText(res), "missing properties: 'title'") {
		t.Errorf("no arguments: %+v, want the tool's own validation", res)
	}
	// A filtered-out tool is as unknown as one that never existed.
	for _, name := range []string{"t_notes_any", "t_nope", "t_call_tool"} {
		res := searchCall(t, s, "t_call_tool", fmt.Sprintf(`{"name":%q,"arguments":{}}`, name))
		if want := fmt.Sprintf("Unknown tool %q: this server offers no tool of that name. Call t_find_tools", name); !res.IsError || !strings.HasPrefix(resultText(res), want) {
			t.Errorf("%s: %q, want %q", name, resultText(res), want)
		}
	}
	// Other names are unknown tools of the server.
	for _, name := range []string{"t_notes_create", "find_tools"} {
		if _, err := s.CallTool(t.Context(), aCall(), &protocol.CallToolRequest{Name: name}); !errors.Is(err, protocol.ErrInvalidParams) {
			t.Errorf("%s: %v, want invalid params", name, err)
		}
	}
}

func TestCallToolIsCancelledWithItsRequest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "n.json"), schemaManifest)
	started := make(chan struct{})
	be := &fakeBackend{fn: func(ctx context.Context, _ string, _ jsontext.Value) (jsontext.Value, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := NewSearch(New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan *protocol.CallToolResult)
	// Ends when the call returns, which cancel makes it do.
	go func() {
		res, _ := s.CallTool(ctx, aCall(), &protocol.CallToolRequest{Name: "t_call_tool", Arguments: []byte(`{"name":"t_notes_any"}`)})
		done <- res
	}()
	<-started
	cancel()
	select {
	case res := <-done:
		if !res.IsError || resultText(res) != "The call was cancelled." {
			t.Errorf("result %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call_tool not cancelled")
	}
}

// writeThousandTools writes the catalogue again and again, with its
// manifests and tools renamed each time, until dir holds at least 1,000
// tools.
func writeThousandTools(tb testing.TB, dir string) {
	tb.Helper()
	files, _ := filepath.Glob("testdata/catalogue/*.json")
	n := 0
	for copyNo := 0; n < 1000; copyNo++ {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				tb.Fatal(err)
			}
			suffix := fmt.Sprint(copyNo)
			m["id"] = fmt.Sprint(m["id"], suffix)
			methods := map[string]any{}
			for _, tool := range m["tools"].([]any) {
				tool := tool.(map[string]any)
				tool["name"] = fmt.Sprint(tool["name"], suffix)
				methods[tool["name"].(string)] = tool["name"]
				n++
			}
			m["implementation"] = map[string]any{"methods": methods}
			out, _ := json.Marshal(m)
			writeFile(tb, filepath.Join(dir, suffix+"-"+filepath.Base(f)), string(out))
		}
	}
}

// BenchmarkFindTools measures find_tools over 1,000 tools, reporting the
// median time of a call as p50-ns.
func BenchmarkFindTools(b *testing.B) {
	dir := b.TempDir()
	writeThousandTools(b, dir)
	r := New(Options{Dirs: []string{dir}, Prefix: "t"})
	s := NewSearch(r)
	queries := []string{"reply to the last message from Ana", "what is on the agenda today", "blood oxygen overnight", "take a screenshot", "file a bug about the login page", "sned an emial to Tom about the calandar"}
	req := &protocol.CallToolRequest{Name: "t_find_tools"}
	for _, q := range queries { // the index is made on first use
		req.Arguments = []byte(fmt.Sprintf(`{"query":%q}`, q))
		s.CallTool(b.Context(), aCall(), req)
	}
	var times []time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req.Arguments = []byte(fmt.Sprintf(`{"query":%q}`, queries[i%len(queries)]))
		i++
		start := time.Now()
		res, err := s.CallTool(b.Context(), aCall(), req)
		times = append(times, time.Since(start))
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(len(r.Snapshot().Entries)), "tools")
}

// FuzzSearchArguments: whatever find_tools and call_tool are given, the
// answer is a result (isError for bad arguments), never a panic or an error.
func FuzzSearchArguments(f *testing.F) {
	for _, s := range []string{`{"query":"note"}`, `{"query":"x","limit":20}`, `{"limit":-1}`, `{"name":"t_notes_any","arguments":{}}`, `{"name":"t_notes_any","arguments":[]}`, `null`, ``, `[`, `{"query":"\ud800"}`} {
		f.Add(s)
	}
	dir := f.TempDir()
	writeFile(f, filepath.Join(dir, "n.json"), schemaManifest)
	be := &fakeBackend{fn: func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return jsontext.Value(`{}`), nil
	}}
	s := NewSearch(New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be}))
	f.Fuzz(func(t *testing.T, args string) {
		for _, name := range []string{"t_find_tools", "t_call_tool"} {
			res, err := s.CallTool(t.Context(), aCall(), &protocol.CallToolRequest{Name: name, Arguments: []byte(args)})
			if err != nil || res == nil {
				t.Fatalf("%s(%s): %v, %v", name, args, res, err)
			}
		}
	})
}

// With more groups than find_tools' description has room for, it names
// those that fit, one per line, and counts the rest on a line of its own,
// within maxGroupsText.
func TestManyGroupsAreCutOnALineOfTheirOwn(t *testing.T) {
	dir := t.TempDir()
	for i := range 200 {
		id := fmt.Sprintf("group-with-a-long-name-%03d", i)
		writeFile(t, filepath.Join(dir, id+".json"), manifestJSON(id, id+".tool"))
	}
	got := groups(New(Options{Dirs: []string{dir}}).Snapshot())
	if len(got) > maxGroupsText {
		t.Errorf("%d bytes of groups, want at most %d", len(got), maxGroupsText)
	}
	lines := strings.Split(got, "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "- ") || strings.Count(l, "- ") != 1 {
			t.Errorf("line %q: want one group per line", l)
		}
	}
	if last := lines[len(lines)-1]; last != fmt.Sprintf("- and %d more groups", 200-(len(lines)-1)) {
		t.Errorf("last line %q, want the count of the groups left out", last)
	}
}

// Each tool found says why it matched; an empty answer suggests the
// names that look the most like the request.
func TestFindToolsSaysWhyAndSuggests(t *testing.T) {
	s := NewSearch(New(Options{Dirs: catalogueDirs, Prefix: "tairseach"}))
	var out struct {
		Tools []struct {
			Name string `json:"name"`
			Why  string `json:"why"`
		} `json:"tools"`
		Closest []string `json:"closest"`
		Note    string   `json:"note"`
	}
	if err := json.Unmarshal(searchCall(t, s, "tairseach_find_tools", `{"query":"sned an emial to Zed","limit":1}`).StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 1 || out.Tools[0].Name != "tairseach_gmail_send" || out.Tools[0].Why != "sned as send (name), emial as email (title); not zed" {
		t.Errorf("found %+v", out.Tools)
	}
	out.Tools = nil
	if err := json.Unmarshal(searchCall(t, s, "tairseach_find_tools", `{"query":"xxcalendarxx"}`).StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 0 || len(out.Closest) != 3 || !strings.HasPrefix(out.Closest[0], "tairseach_calendar_") || !strings.Contains(out.Note, "closest") {
		t.Errorf("empty answer: %+v", out)
	}
}
