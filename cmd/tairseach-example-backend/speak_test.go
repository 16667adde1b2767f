package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestImportReportsProgressPerNoteAndALogMessage(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	res, x := exchangeResult[importResult](t, c, "notes.import", map[string]any{"count": 3, "delay_ms": 10}, nil)
	if res.Imported != 3 || len(res.IDs) != 3 {
		t.Errorf("result %+v", res)
	}
	var got []string
	for _, m := range x.notified {
		got = append(got, m.Method+" "+string(m.Params))
	}
	want := []string{
		`notifications/progress {"message":"1 of 3 notes","progress":1,"total":3}`,
		`notifications/progress {"message":"2 of 3 notes","progress":2,"total":3}`,
		`notifications/progress {"message":"3 of 3 notes","progress":3,"total":3}`,
		`notifications/message {"data":"imported 3 notes","level":"info","logger":"notes"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("notifications:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	list := result[noteList](t, c, "notes.list", map[string]any{"query": "imported note"})
	var titles []string
	for _, n := range list.Notes {
		titles = append(titles, n.Title)
		if !slices.Contains(res.IDs, n.ID) {
			t.Errorf("listed %s, not among the ids imported %v", n.ID, res.IDs)
		}
	}
	slices.Sort(titles)
	if fmt.Sprint(titles) != "[Imported note 1 of 3 Imported note 2 of 3 Imported note 3 of 3]" {
		t.Errorf("titles %q", titles)
	}

	named, _ := exchangeResult[importResult](t, c, "notes.import", map[string]any{"count": 1, "title": "  Trip  "}, nil)
	if n := result[note](t, c, "notes.get", map[string]any{"id": named.IDs[0]}); n.Title != "Trip 1 of 1" {
		t.Errorf("title %q", n.Title)
	}
}

func TestImportRejectsBadParams(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	for _, tt := range []struct {
		params any
		msg    string
	}{
		{map[string]any{}, "count is required"},
		{map[string]any{"count": 0}, "count must be between 1 and 100, got 0"},
		{map[string]any{"count": 101}, "count must be between 1 and 100, got 101"},
		{map[string]any{"count": 1.5}, "count must be an integer"},
		{map[string]any{"count": 1, "delay_ms": -1}, "delay_ms must be between 0 and 10000, got -1"},
		{map[string]any{"count": 1, "delay_ms": 10001}, "delay_ms must be between 0 and 10000"},
		{map[string]any{"count": 1, "title": " "}, "title must be 1 to 188 bytes, got 0"},
		{map[string]any{"count": 1, "prefix": "x"}, `unknown parameter "prefix"`},
	} {
		wantError(t, c, "notes.import", tt.params, codeInvalidParams, tt.msg)
	}
	if got := result[noteList](t, c, "notes.list", nil); got.Total != 0 {
		t.Errorf("%d notes after bad imports", got.Total)
	}
}

// A client that hangs up stops an import: its next progress fails to
// reach anyone.
func TestImportStopsWhenTheClientHangsUp(t *testing.T) {
	returned := make(chan error, 1)
	ts := startServer(t, serverConfig{tweak: returning("notes.import", returned)})
	c := ts.dial(t)
	c.request("notes.import", map[string]any{"count": 100, "delay_ms": 20})
	for range 2 {
		if m := c.next(); m.Method != "notifications/progress" {
			t.Fatalf("got %+v", m)
		}
	}
	c.c.Close()
	var re *rpcError
	if err := waitReturned(t, returned); !errors.As(err, &re) || re.Code != codeCancelled || !strings.Contains(re.Message, "the client hung up after") {
		t.Fatalf("the import returned %v", err)
	}
	if got := result[noteList](t, ts.dial(t), "notes.list", nil); got.Total < 2 || got.Total > 5 {
		t.Errorf("%d notes made after the client hung up at the second", got.Total)
	}
}

func TestDigestAsksTheClientsModel(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	result[note](t, c, "notes.create", map[string]any{"title": "Lisbon", "body": "Travel in May: trams, tiles."})
	result[note](t, c, "notes.create", map[string]any{"title": "Travel insurance", "body": "Renew before the trip."})
	result[note](t, c, "notes.create", map[string]any{"title": "Groceries", "body": "oat milk"})

	res, x := exchangeResult[map[string]string](t, c, "notes.digest", map[string]any{"topic": "travel"}, func(q message) (any, *rpcError) {
		return sampled("Two trips planned."), nil
	})
	if len(res) != 1 || res["digest"] != "Two trips planned." {
		t.Errorf("result %v", res)
	}
	if len(x.asked) != 1 || string(x.asked[0].ID) != `"digest"` || x.asked[0].Method != "sampling/createMessage" {
		t.Fatalf("asked %+v", x.asked)
	}
	var p struct {
		Messages []struct {
			Role    string
			Content struct{ Type, Text string }
		}
		SystemPrompt string
		MaxTokens    int
	}
	if err := json.Unmarshal(x.asked[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	text := p.Messages[0].Content.Text
	if len(p.Messages) != 1 || p.Messages[0].Role != "user" || p.Messages[0].Content.Type != "text" || p.MaxTokens != 300 || p.SystemPrompt == "" ||
		!strings.Contains(text, `about "travel"`) || !strings.Contains(text, "## Lisbon\nTravel in May") || !strings.Contains(text, "## Travel insurance") ||
		strings.Contains(text, "Groceries") {
		t.Errorf("sampling params %s", x.asked[0].Params)
	}

	t.Run("the text blocks of a content array are joined", func(t *testing.T) {
		res, _ := exchangeResult[map[string]string](t, c, "notes.digest", map[string]any{"topic": "lisbon"}, func(message) (any, *rpcError) {
			return map[string]any{"role": "assistant", "model": "m", "content": []any{
				map[string]string{"type": "text", "text": "Trams."}, map[string]string{"type": "image", "data": "AA==", "mimeType": "image/png"},
				map[string]string{"type": "text", "text": "Tiles."}}}, nil
		})
		if res["digest"] != "Trams.\nTiles." {
			t.Errorf("digest %q", res["digest"])
		}
	})
	t.Run("an answer without text is an error", func(t *testing.T) {
		x := c.exchange("notes.digest", map[string]any{"topic": "lisbon"}, func(message) (any, *rpcError) {
			return map[string]any{"role": "assistant", "model": "m", "content": map[string]string{"type": "image", "data": "AA==", "mimeType": "image/png"}}, nil
		})
		if x.reply.Error == nil || x.reply.Error.Message != "the client's model answered without text" {
			t.Errorf("reply %+v", x.reply)
		}
	})
	t.Run("no notes about the topic: nothing is asked", func(t *testing.T) {
		wantError(t, c, "notes.digest", map[string]any{"topic": "cheese"}, codeNotFound, `no notes about "cheese" to summarize`)
	})
	t.Run("bad params", func(t *testing.T) {
		wantError(t, c, "notes.digest", map[string]any{}, codeInvalidParams, "topic is required")
		wantError(t, c, "notes.digest", map[string]any{"topic": "  "}, codeInvalidParams, "topic must not be empty")
	})
}

// What the bridge answers when the client cannot be asked, or does not
// answer, becomes an error a model can act on, with the bridge's code.
func TestABridgesRefusalIsAClearError(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	n := result[note](t, c, "notes.create", map[string]any{"title": "Lisbon", "body": "travel"})
	calls := []struct {
		method string
		params any
		doing  string
	}{
		{"notes.digest", map[string]any{"topic": "travel"}, "summarize"},
		{"notes.label", map[string]any{"id": n.ID}, "ask its user for a label"},
		{"files.roots", map[string]any{}, "list its roots"},
	}
	for _, tt := range []struct {
		name     string
		answer   *rpcError
		want     map[string]string // by method, the error's message
		wantData string
	}{
		{
			name:   "a client without the capability",
			answer: nil, // missing
			want: map[string]string{
				"notes.digest": "this client cannot summarize: it offers no sampling (MCP sampling capability)",
				"notes.label":  "this client cannot ask its user for a label: it offers no forms (MCP elicitation capability)",
				"files.roots":  "this client cannot list its roots: it offers no roots (MCP roots capability)",
			},
		},
		{
			name:   "nobody answered in time",
			answer: &rpcError{Code: codeTimeout, Message: "timed out: the client did not answer within 5m0s"},
			want:   map[string]string{"*": "cannot %s: timed out: the client did not answer within 5m0s"},
		},
		{
			name:   "the call ended first",
			answer: &rpcError{Code: codeCancelled, Message: "cancelled: the call ended before the client answered"},
			want:   map[string]string{"*": "cannot %s: cancelled: the call ended before the client answered"},
		},
		{
			name:   "a bridge that does not pass the question on",
			answer: &rpcError{Code: codeMethodNotFound, Message: "method not found"},
			want:   map[string]string{"*": "cannot %s: the bridge does not pass %s on to its client (method not found)"},
		},
		{
			name:   "the client's own error",
			answer: &rpcError{Code: -1, Message: "User rejected", Data: "why"},
			want:   map[string]string{"*": "cannot %s: the client answered %s with error -1: User rejected"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, call := range calls {
				x := c.exchange(call.method, call.params, func(q message) (any, *rpcError) {
					if tt.answer == nil {
						return missing(q)
					}
					return nil, tt.answer
				})
				want, ok := tt.want[call.method]
				if !ok {
					want = tt.want["*"]
					if strings.Count(want, "%s") == 2 {
						want = fmt.Sprintf(want, call.doing, x.asked[0].Method)
					} else {
						want = fmt.Sprintf(want, call.doing)
					}
				}
				wantCode := codeMissingCapability
				if tt.answer != nil {
					wantCode = tt.answer.Code
				}
				if e := x.reply.Error; e == nil || e.Code != wantCode || e.Message != want {
					t.Errorf("%s: reply %+v, want %d %q", call.method, e, wantCode, want)
				} else if tt.answer == nil && !strings.Contains(string(e.Data), `"requiredCapabilities"`) {
					t.Errorf("%s: data %s, want the bridge's requiredCapabilities", call.method, e.Data)
				}
			}
		})
	}
	if got := result[note](t, c, "notes.get", map[string]any{"id": n.ID}); got.Label != "" {
		t.Errorf("the note was labelled %q", got.Label)
	}
}

func TestLabelAsksTheUserAndStoresTheAnswer(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	n := result[note](t, c, "notes.create", map[string]any{"title": "Groceries", "body": "oat milk"})
	get := func() note { return result[note](t, c, "notes.get", map[string]any{"id": n.ID}) }

	res, x := exchangeResult[labelResult](t, c, "notes.label", map[string]any{"id": n.ID}, func(message) (any, *rpcError) {
		return accepted(map[string]any{"label": " shopping "}), nil
	})
	if res != (labelResult{ID: n.ID, Title: "Groceries", Label: "shopping", Answer: "accept", Changed: true}) || get().Label != "shopping" {
		t.Errorf("result %+v, note %+v", res, get())
	}
	want := `{"message":"A label for the note “Groceries”?","requestedSchema":{"properties":{"label":{"description":"A word or two to file the note under, such as shopping or work.","maxLength":50,"minLength":1,"title":"Label","type":"string"}},"required":["label"],"type":"object"}}`
	if len(x.asked) != 1 || string(x.asked[0].ID) != `"label"` || x.asked[0].Method != "elicitation/create" || string(x.asked[0].Params) != want {
		t.Errorf("asked %+v, want params %s", x.asked, want)
	}
	if l := result[noteList](t, c, "notes.list", nil); l.Notes[0].Label != "shopping" {
		t.Errorf("list %+v", l)
	}

	for _, action := range []string{"decline", "cancel"} {
		res, x := exchangeResult[labelResult](t, c, "notes.label", map[string]any{"id": n.ID}, func(message) (any, *rpcError) {
			return map[string]any{"action": action}, nil
		})
		if res != (labelResult{ID: n.ID, Title: "Groceries", Label: "shopping", Answer: action}) || get().Label != "shopping" {
			t.Errorf("%s: result %+v, note %+v", action, res, get())
		}
		// The form offers the label the note has.
		if !strings.Contains(string(x.asked[0].Params), `"default":"shopping"`) {
			t.Errorf("%s: asked %s", action, x.asked[0].Params)
		}
	}

	for _, content := range []map[string]any{{"label": "   "}, {"label": strings.Repeat("x", 51)}, {}} {
		x := c.exchange("notes.label", map[string]any{"id": n.ID}, func(message) (any, *rpcError) { return accepted(content), nil })
		if e := x.reply.Error; e == nil || e.Code != codeInvalidParams || !strings.Contains(e.Message, "the note is unchanged") {
			t.Errorf("accepted %v: reply %+v", content, x.reply)
		}
	}
	if get().Label != "shopping" {
		t.Errorf("label %q after refused answers", get().Label)
	}

	t.Run("a note deleted while the user is asked is not found", func(t *testing.T) {
		other := ts.dial(t)
		x := c.exchange("notes.label", map[string]any{"id": n.ID}, func(message) (any, *rpcError) {
			result[map[string]bool](t, other, "notes.delete", map[string]any{"id": n.ID})
			return accepted(map[string]any{"label": "late"}), nil
		})
		if e := x.reply.Error; e == nil || e.Code != codeNotFound {
			t.Errorf("reply %+v", x.reply)
		}
	})
	t.Run("an unknown note is not asked about", func(t *testing.T) {
		wantError(t, c, "notes.label", map[string]any{"id": "abc"}, codeNotFound, "note not found")
		wantError(t, c, "notes.label", map[string]any{}, codeInvalidParams, "id is required")
	})
}

func TestRootsAreTheClients(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	x := c.exchange("files.roots", nil, anything)
	if x.reply.Error != nil || string(x.reply.Result) != `{"roots":[{"name":"notes","uri":"file:///home/ann/notes"}]}` {
		t.Errorf("reply %+v %s", x.reply.Error, x.reply.Result)
	}
	if len(x.asked) != 1 || string(x.asked[0].ID) != `"roots"` || x.asked[0].Method != "roots/list" || string(x.asked[0].Params) != "{}" {
		t.Errorf("asked %+v", x.asked)
	}
	x = c.exchange("files.roots", map[string]any{}, func(message) (any, *rpcError) { return map[string]any{"roots": []any{}}, nil })
	if string(x.reply.Result) != `{"roots":[]}` {
		t.Errorf("no roots: %s", x.reply.Result)
	}
	x = c.exchange("files.roots", nil, func(message) (any, *rpcError) { return map[string]any{"files": []any{}}, nil })
	if x.reply.Error == nil || x.reply.Error.Message != "the client's answer is not a list of roots" {
		t.Errorf("not roots: %+v", x.reply)
	}
	wantError(t, c, "files.roots", map[string]any{"path": "."}, codeInvalidParams, "this method takes no parameters")
}
