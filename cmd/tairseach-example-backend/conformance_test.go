package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestConformanceLogging(t *testing.T) {
	ts := startServer(t, serverConfig{})
	x := ts.dial(t).exchange("conformance.logging", map[string]any{}, nil)
	var got []string
	for _, m := range x.notified {
		got = append(got, m.Method+" "+string(m.Params))
	}
	want := []string{
		`notifications/message {"data":"Tool execution started","level":"info","logger":"conformance"}`,
		`notifications/message {"data":"Tool processing data","level":"info","logger":"conformance"}`,
		`notifications/message {"data":"Tool execution completed","level":"info","logger":"conformance"}`,
	}
	if !slices.Equal(got, want) || string(x.reply.Result) != `"Tool with logging executed successfully"` {
		t.Errorf("notifications:\n%s\nresult %s", strings.Join(got, "\n"), x.reply.Result)
	}
}

// Each scripted method asks what its scenario expects, under the name it
// expects, and answers with what it was told.
func TestConformanceScripts(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	for _, tt := range []struct {
		method string
		args   map[string]any
		asked  []string // id method, in order
		params map[string]string
		want   string
	}{
		{
			method: "conformance.sampling", args: map[string]any{"prompt": "Test prompt"},
			asked:  []string{`"sampling" sampling/createMessage`},
			params: map[string]string{"sampling": `{"maxTokens":100,"messages":[{"content":{"text":"Test prompt","type":"text"},"role":"user"}]}`},
			want:   "LLM response: A short summary.",
		},
		{
			method: "conformance.elicitation", args: map[string]any{"message": "Who are you?"},
			asked:  []string{`"elicitation" elicitation/create`},
			params: map[string]string{"elicitation": `{"message":"Who are you?","requestedSchema":{"properties":{"email":{"description":"User's email address","type":"string"},"username":{"description":"User's response","type":"string"}},"required":["username","email"],"type":"object"}}`},
			want:   `User response: action=accept, content={"color":"blue","context":"tests","label":"shopping","name":"Alice"}`,
		},
		{
			method: "conformance.user_name",
			asked:  []string{`"user_name" elicitation/create`},
			params: map[string]string{"user_name": `{"message":"What is your name?","requestedSchema":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}}`},
			want:   "Hello, Alice!",
		},
		{
			method: "conformance.capital",
			asked:  []string{`"capital_question" sampling/createMessage`},
			params: map[string]string{"capital_question": `{"maxTokens":100,"messages":[{"content":{"text":"What is the capital of France?","type":"text"},"role":"user"}]}`},
			want:   "The model says: A short summary.",
		},
		{
			method: "conformance.client_roots",
			asked:  []string{`"client_roots" roots/list`},
			params: map[string]string{"client_roots": `{}`},
			want:   "The client's roots: file:///home/ann/notes",
		},
		{
			method: "conformance.multi_round",
			asked:  []string{`"step1" elicitation/create`, `"step2" elicitation/create`},
			want:   "Hello, Alice! Your favorite color is blue.",
		},
		{
			method: "conformance.user_context",
			asked:  []string{`"user_context" elicitation/create`},
			params: map[string]string{"user_context": `{"message":"What context should the prompt use?","requestedSchema":{"properties":{"context":{"type":"string"}},"required":["context"],"type":"object"}}`},
			want:   "Context for the prompt: tests",
		},
		{
			method: "conformance.capabilities",
			asked:  []string{`"user_name" elicitation/create`, `"capital_question" sampling/createMessage`},
			want:   "Hello, Alice! The model says: A short summary.",
		},
		{
			method: "conformance.elicitation_defaults",
			asked:  []string{`"defaults" elicitation/create`},
			want:   `Elicitation completed: action=accept, content={"color":"blue","context":"tests","label":"shopping","name":"Alice"}`,
		},
		{
			method: "conformance.elicitation_enums",
			asked:  []string{`"enums" elicitation/create`},
			want:   `Elicitation completed: action=accept, content=`,
		},
	} {
		t.Run(tt.method, func(t *testing.T) {
			res, x := exchangeResult[string](t, c, tt.method, tt.args, anything)
			var asked []string
			for _, q := range x.asked {
				asked = append(asked, string(q.ID)+" "+q.Method)
				if want, ok := tt.params[strings.Trim(string(q.ID), `"`)]; ok && string(q.Params) != want {
					t.Errorf("asked %s with %s, want %s", q.ID, q.Params, want)
				}
			}
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("asked %q, want %q", asked, tt.asked)
			}
			if !strings.HasPrefix(res, tt.want) {
				t.Errorf("result %q, want %q", res, tt.want)
			}
		})
	}
}

func TestConformanceFormsHaveTheScenariosSchemas(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	for method, want := range map[string][]string{
		"conformance.elicitation_defaults": {
			`"name":{"default":"John Doe","description":"User name","type":"string"}`,
			`"age":{"default":30,"description":"User age","type":"integer"}`,
			`"score":{"default":95.5,"description":"User score","type":"number"}`,
			`"status":{"default":"active","description":"User status","enum":["active","inactive","pending"],"type":"string"}`,
			`"verified":{"default":true,"description":"Verification status","type":"boolean"}`,
		},
		"conformance.elicitation_enums": {
			`"untitledSingle":{"description":"Select one option","enum":["option1","option2","option3"],"type":"string"}`,
			`"titledSingle":{"description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},`,
			`"legacyEnum":{"description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"],"type":"string"}`,
			`"untitledMulti":{"description":"Select multiple options","items":{"enum":["option1","option2","option3"],"type":"string"},"type":"array"}`,
			`"titledMulti":{"description":"Select multiple options with titles","items":{"anyOf":[{"const":"value1","title":"First Choice"},`,
		},
	} {
		x := c.exchange(method, nil, anything)
		for _, w := range want {
			if !strings.Contains(string(x.asked[0].Params), w) {
				t.Errorf("%s asked %s\nwithout %s", method, x.asked[0].Params, w)
			}
		}
	}
}

// The three questions of conformance.multiple are all asked before any
// answer (the bridge gathers what comes together into one
// input_required result), and may be answered in any order.
func TestConformanceMultipleAsksAllAtOnce(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	id := c.request("conformance.multiple", map[string]any{})
	var qs []message
	for range 3 {
		qs = append(qs, c.next())
	}
	var asked []string
	for i := len(qs) - 1; i >= 0; i-- {
		asked = append(asked, string(qs[i].ID))
		res, _ := anything(qs[i])
		c.answer(qs[i], res, nil)
	}
	if fmt.Sprint(asked) != `["client_roots" "greeting" "user_name"]` {
		t.Errorf("asked %v", asked)
	}
	m := c.next()
	if string(m.ID) != fmt.Sprint(id) || string(m.Result) != `"Hello, Alice! The model says: A short summary. The client's roots: file:///home/ann/notes"` {
		t.Errorf("reply %s %s %+v", m.ID, m.Result, m.Error)
	}
}

// A client that offers only one of the capability check's two kinds of
// question is asked that one; one that offers neither gets -32021.
func TestConformanceCapabilitiesAsksOnlyWhatTheClientOffers(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	onlySampling := func(q message) (any, *rpcError) {
		if q.Method == "sampling/createMessage" {
			return anything(q)
		}
		return missing(q)
	}
	res, _ := exchangeResult[string](t, c, "conformance.capabilities", nil, onlySampling)
	if res != "The model says: A short summary." {
		t.Errorf("result %q", res)
	}
	x := c.exchange("conformance.capabilities", nil, missing)
	if e := x.reply.Error; e == nil || e.Code != codeMissingCapability || e.Message != "this client cannot ask its model: it offers no sampling (MCP sampling capability)" {
		t.Errorf("reply %+v", x.reply)
	}
	x = c.exchange("conformance.missing_capability", nil, missing)
	var data struct{ RequiredCapabilities map[string]json.RawMessage }
	if e := x.reply.Error; e == nil || e.Code != codeMissingCapability || json.Unmarshal(e.Data, &data) != nil || data.RequiredCapabilities["sampling"] == nil {
		t.Errorf("missing capability: reply %+v", x.reply)
	}
}
