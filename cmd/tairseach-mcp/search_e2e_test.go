package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKClientInSearchMode: the official Go SDK client lists the two
// search tools, finds a tool and calls it through call_tool, in both eras.
func TestGoSDKClientInSearchMode(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			be := backend(t)
			dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
			cs := connectSDK(t, bridgeCmd(dir, be.Path, "--tool-mode", "search", "--exclude", "notes.fail"), version, nil)
			ctx := t.Context()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			if got, want := strings.Join(toolNames(list), ","), "tairseach_find_tools,tairseach_call_tool"; got != want {
				t.Fatalf("tools = %s, want %s", got, want)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_find_tools", Arguments: map[string]any{"query": "create a note", "limit": 1}})
			if err != nil || res.IsError {
				t.Fatalf("find_tools: %v %s", err, textOf(res))
			}
			var found struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
				} `json:"tools"`
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if version < "2025-06-18" {
				// Before 2025-06-18 there is no structuredContent: the text carries the JSON.
				if res.StructuredContent != nil {
					t.Errorf("structuredContent sent to a %s client", version)
				}
				sc = []byte(textOf(res))
			}
			if err := json.Unmarshal(sc, &found); err != nil || len(found.Tools) != 1 || found.Tools[0].Name != "tairseach_notes_create" || found.Tools[0].InputSchema["type"] != "object" {
				t.Fatalf("find_tools structuredContent = %s (%v)", sc, err)
			}
			var text, structured any
			json.Unmarshal([]byte(textOf(res)), &text)
			json.Unmarshal(sc, &structured)
			if a, b := mustJSON(t, text), mustJSON(t, structured); a != b {
				t.Errorf("find_tools text %s differs from its structuredContent %s", a, b)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_call_tool", Arguments: map[string]any{"name": found.Tools[0].Name, "arguments": map[string]any{"title": "milk"}}})
			if err != nil || res.IsError || !strings.Contains(textOf(res), `"title":"milk"`) {
				t.Errorf("call_tool: %v %s", err, textOf(res))
			}
			// A filtered-out tool is unknown, and the result says what to do.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_call_tool", Arguments: map[string]any{"name": "tairseach_notes_fail", "arguments": map[string]any{}}})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "tairseach_find_tools") {
				t.Errorf("call_tool of a filtered-out tool: %v %s", err, textOf(res))
			}
			if n := countMethod(be, "secrets.read"); n != 0 {
				t.Errorf("the backend received the filtered-out tool's method %d times", n)
			}
		})
	}
}

// mustJSON encodes v, maps sorted by key, so equal values compare equal.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
