package main

// The methods of the conformance fixtures, apart from the examples.
//
// The official MCP conformance suite (scripts/interop/CONFORMANCE.md) runs
// against the bridge; scripts/interop/fixtures/conformance.json maps the
// tools and prompts it calls, by the names it expects, to methods of this
// backend. The suite's scenarios about a server that speaks during a call
// expect each tool to log, or to ask its client fixed questions under
// fixed names (user_name, capital_question, client_roots…), with fixed
// messages and form schemas, and to answer with text made of the answers.
// Nothing of that is what a real backend would do, so these methods live
// here, named conformance.*, and no example manifest serves them; what
// they exercise is the bridge's side: log messages, questions of every
// kind, several at once and in rounds, and, in 2026-07-28, the
// input_required results that carry them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// conformanceMethods returns the methods the conformance fixtures map to.
func conformanceMethods() map[string]handler {
	m := map[string]handler{"conformance.logging": conformanceLogging}
	for name, s := range conformanceScripts {
		m[name] = s.run
	}
	return m
}

// conformanceLogging sends three log messages at info level about 50 ms
// apart (tools-call-with-logging; server-stateless checks that a client
// that asked for no log level gets none of them).
func conformanceLogging(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			t := time.NewTimer(50 * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, &rpcError{Code: codeShuttingDown, Message: "interrupted: the backend is shutting down"}
			}
		}
		if err := p.notify("notifications/message", map[string]any{"level": "info", "logger": "conformance", "data": msg}); err != nil {
			return nil, &rpcError{Code: codeCancelled, Message: "cancelled: the client hung up"}
		}
	}
	return "Tool with logging executed successfully", nil
}

// A script is a conformance method that asks its questions a round at a
// time, every question of a round before any answer, and answers with
// the text reply makes of the answers.
type script struct {
	rounds [][]scriptQuestion
	// optional: a question the client cannot be asked (-32021) is left
	// out, not an error, as long as one of the round is asked.
	optional bool
	reply    func(args map[string]string, answers map[string]json.RawMessage) string
}

// scriptQuestion is one question of a script: its id (the name the suite
// expects), its method, and its params, made from the tool's arguments.
type scriptQuestion struct {
	id, method string
	params     func(args map[string]string) any
}

func (s script) run(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
	// The fixtures' schemas check the arguments; a script only reads
	// the strings among them.
	var raw map[string]json.RawMessage
	if params != nil && json.Unmarshal(params, &raw) != nil {
		return nil, invalidParams("params must be an object")
	}
	args := map[string]string{}
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil {
			args[k] = s
		}
	}
	answers := map[string]json.RawMessage{}
	for _, round := range s.rounds {
		asked := make([]*question, len(round))
		for i, q := range round {
			var err error
			if asked[i], err = p.ask(q.id, q.method, q.params(args)); err != nil {
				return nil, needOf(q.method).failed(ctx, err)
			}
		}
		refused := 0
		for i, q := range asked {
			res, err := q.wait(ctx)
			var re *rpcError
			if s.optional && errors.As(err, &re) && re.Code == codeMissingCapability && refused+1 < len(asked) {
				refused++
				continue
			}
			if err != nil {
				return nil, needOf(round[i].method).failed(ctx, err)
			}
			answers[round[i].id] = res
		}
	}
	return s.reply(args, answers), nil
}

// needOf is what a conformance question needs, for its errors.
func needOf(method string) need {
	switch method {
	case "sampling/createMessage":
		return need{method: method, doing: "ask its model", what: "sampling", capability: "sampling"}
	case "roots/list":
		return toListRoots
	}
	return need{method: method, doing: "ask its user", what: "forms", capability: "elicitation"}
}

// Question makers.

func sample(text string, maxTokens int) func(map[string]string) any {
	return func(map[string]string) any {
		return map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": text}}}, "maxTokens": maxTokens}
	}
}

func form(message string, properties map[string]any, required ...string) func(map[string]string) any {
	return func(map[string]string) any {
		schema := map[string]any{"type": "object", "properties": properties}
		if len(required) > 0 {
			schema["required"] = required
		}
		return map[string]any{"message": message, "requestedSchema": schema}
	}
}

func askRoots(map[string]string) any { return map[string]any{} }

var (
	nameForm = form("What is your name?", map[string]any{"name": map[string]string{"type": "string"}}, "name")
	str      = map[string]string{"type": "string"}
)

// What the answers say, for replies.

// formAnswer returns a form's action and its content as JSON.
func formAnswer(raw json.RawMessage) (action, content string) {
	var a struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(raw, &a)
	if len(a.Content) == 0 {
		a.Content = json.RawMessage("{}")
	}
	return a.Action, string(a.Content)
}

// formField returns the string field of an accepted form, or "".
func formField(raw json.RawMessage, field string) string {
	var a struct {
		Action  string            `json:"action"`
		Content map[string]string `json:"content"`
	}
	json.Unmarshal(raw, &a)
	if a.Action != "accept" {
		return ""
	}
	return a.Content[field]
}

// sampledOrNot returns a sampling answer's text, or what was wrong with it.
func sampledOrNot(raw json.RawMessage) string {
	text, err := sampledText(raw)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return text
}

// rootURIs lists the URIs of a roots/list answer.
func rootURIs(raw json.RawMessage) string {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	json.Unmarshal(raw, &r)
	var uris []string
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	if len(uris) == 0 {
		return "none"
	}
	return strings.Join(uris, ", ")
}

func hello(raw json.RawMessage) string {
	if name := formField(raw, "name"); name != "" {
		return "Hello, " + name + "!"
	}
	action, _ := formAnswer(raw)
	return "No name given (" + action + ")."
}

// conformanceScripts are the scripted methods, by method name.
var conformanceScripts = map[string]script{
	// tools-call-sampling (2025-11-25): the tool's prompt, to the model.
	"conformance.sampling": {
		rounds: [][]scriptQuestion{{{id: "sampling", method: "sampling/createMessage", params: func(args map[string]string) any {
			return sample(args["prompt"], 100)(args)
		}}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			return "LLM response: " + sampledOrNot(a["sampling"])
		},
	},
	// tools-call-elicitation (2025-11-25): the tool's message, with the
	// scenario's form.
	"conformance.elicitation": {
		rounds: [][]scriptQuestion{{{id: "elicitation", method: "elicitation/create", params: func(args map[string]string) any {
			return form(args["message"], map[string]any{
				"username": map[string]string{"type": "string", "description": "User's response"},
				"email":    map[string]string{"type": "string", "description": "User's email address"},
			}, "username", "email")(args)
		}}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			action, content := formAnswer(a["elicitation"])
			return fmt.Sprintf("User response: action=%s, content=%s", action, content)
		},
	},
	// elicitation-sep1034-defaults: a default for every primitive type.
	"conformance.elicitation_defaults": {
		rounds: [][]scriptQuestion{{{id: "defaults", method: "elicitation/create", params: form("Please review and update the form fields with defaults", map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		})}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			action, content := formAnswer(a["defaults"])
			return fmt.Sprintf("Elicitation completed: action=%s, content=%s", action, content)
		},
	},
	// elicitation-sep1330-enums: the five kinds of enum.
	"conformance.elicitation_enums": {
		rounds: [][]scriptQuestion{{{id: "enums", method: "elicitation/create", params: form("Please select options from the enum fields", map[string]any{
			"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
			"titledSingle": map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": []any{
				map[string]string{"const": "value1", "title": "First Option"},
				map[string]string{"const": "value2", "title": "Second Option"},
				map[string]string{"const": "value3", "title": "Third Option"},
			}},
			"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)", "enum": []string{"opt1", "opt2", "opt3"},
				"enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options",
				"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles", "items": map[string]any{"anyOf": []any{
				map[string]string{"const": "value1", "title": "First Choice"},
				map[string]string{"const": "value2", "title": "Second Choice"},
				map[string]string{"const": "value3", "title": "Third Choice"},
			}}},
		})}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			action, content := formAnswer(a["enums"])
			return fmt.Sprintf("Elicitation completed: action=%s, content=%s", action, content)
		},
	},
	// input-required-result-basic-elicitation, and the scenarios that
	// use the same tool (result-type, missing-input-response,
	// ignore-extra-params, validate-input).
	"conformance.user_name": {
		rounds: [][]scriptQuestion{{{id: "user_name", method: "elicitation/create", params: nameForm}}},
		reply:  func(_ map[string]string, a map[string]json.RawMessage) string { return hello(a["user_name"]) },
	},
	// input-required-result-basic-sampling.
	"conformance.capital": {
		rounds: [][]scriptQuestion{{{id: "capital_question", method: "sampling/createMessage", params: sample("What is the capital of France?", 100)}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			return "The model says: " + sampledOrNot(a["capital_question"])
		},
	},
	// input-required-result-basic-list-roots.
	"conformance.client_roots": {
		rounds: [][]scriptQuestion{{{id: "client_roots", method: "roots/list", params: askRoots}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			return "The client's roots: " + rootURIs(a["client_roots"])
		},
	},
	// input-required-result-multiple-input-requests: three kinds at once.
	"conformance.multiple": {
		rounds: [][]scriptQuestion{{
			{id: "user_name", method: "elicitation/create", params: nameForm},
			{id: "greeting", method: "sampling/createMessage", params: sample("Generate a greeting", 50)},
			{id: "client_roots", method: "roots/list", params: askRoots},
		}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			return fmt.Sprintf("%s The model says: %s The client's roots: %s", hello(a["user_name"]), sampledOrNot(a["greeting"]), rootURIs(a["client_roots"]))
		},
	},
	// input-required-result-multi-round: the second question after the
	// first answer.
	"conformance.multi_round": {
		rounds: [][]scriptQuestion{
			{{id: "step1", method: "elicitation/create", params: form("Step 1: What is your name?", map[string]any{"name": str}, "name")}},
			{{id: "step2", method: "elicitation/create", params: form("Step 2: What is your favorite color?", map[string]any{"color": str}, "color")}},
		},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			return fmt.Sprintf("%s Your favorite color is %s.", hello(a["step1"]), formField(a["step2"], "color"))
		},
	},
	// input-required-result-non-tool-request: the resource the prompt
	// test_input_required_result_prompt embeds.
	"conformance.user_context": {
		rounds: [][]scriptQuestion{{{id: "user_context", method: "elicitation/create", params: form("What context should the prompt use?", map[string]any{"context": str}, "context")}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			return "Context for the prompt: " + formField(a["user_context"], "context")
		},
	},
	// input-required-result-capability-check: a form and the model, of
	// which the client may offer either; what it does not offer is not
	// asked (the bridge refuses it with -32021).
	"conformance.capabilities": {
		optional: true,
		rounds: [][]scriptQuestion{{
			{id: "user_name", method: "elicitation/create", params: nameForm},
			{id: "capital_question", method: "sampling/createMessage", params: sample("What is the capital of France?", 100)},
		}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			var said []string
			if raw, ok := a["user_name"]; ok {
				said = append(said, hello(raw))
			}
			if raw, ok := a["capital_question"]; ok {
				said = append(said, "The model says: "+sampledOrNot(raw))
			}
			return strings.Join(said, " ")
		},
	},
	// server-stateless (2026-07-28): a tool that cannot run without
	// sampling; a client that did not declare it gets -32021.
	"conformance.missing_capability": {
		rounds: [][]scriptQuestion{{{id: "sampling", method: "sampling/createMessage", params: sample("Say hello.", 20)}}},
		reply: func(_ map[string]string, a map[string]json.RawMessage) string {
			return "The model says: " + sampledOrNot(a["sampling"])
		},
	},
}
