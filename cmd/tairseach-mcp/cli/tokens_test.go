package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestEstimateTokens(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},                  // 2 words: 2.2
		{`{"name":"x"}`, 4},                 // 2 words, 8 marks: 2.2 + 2
		{"internationalization", 6},         // 1.1 + 12 × 0.4
		{"2024-05-01", 5},                   // 8 digits, 2 marks: 4 + 0.5
		{"café", 2},                         // a word, and é: 1.1 + 1
		{"a\tb\nc d", 4},                    // spaces are free: 4 × 1.1
		{strings.Repeat("word ", 100), 110}, // 1.1 each
	} {
		if got := estimateTokens(tt.text); got != tt.want {
			t.Errorf("estimateTokens(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// The search-mode listing of a large install costs a tenth of the full
// one (the target: at most 1,000 tokens for about 90 tools).
func TestToolsTokensInBothModes(t *testing.T) {
	cost := func(mode string) listCost {
		t.Helper()
		e, out, errb := testEnv(nil)
		args := []string{"tools", "--tokens", "--json", "--tool-mode", mode, "--manifests", "../../../manifests-example", "--manifests", "../../../registry/testdata/catalogue"}
		if code := run(context.Background(), e, args); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb)
		}
		var c listCost
		if err := json.Unmarshal(out.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	all, search := cost("all"), cost("search")
	t.Logf("full listing: %d tools, %d bytes, ~%d tokens; search listing: %d bytes, ~%d tokens", len(all.Tools), all.Bytes, all.Tokens, search.Bytes, search.Tokens)
	if len(all.Tools) != 104 || len(search.Tools) != 2 || search.Tools[0].Name != "tairseach_find_tools" {
		t.Errorf("tools: %d in all mode, %+v in search mode", len(all.Tools), search.Tools)
	}
	if search.Tokens > 1000 || all.Tokens < 10*search.Tokens {
		t.Errorf("search listing ~%d tokens, full ~%d: want at most 1,000 and a tenth", search.Tokens, all.Tokens)
	}
	sum := 0
	for _, tc := range all.Tools {
		sum += tc.Bytes
	}
	if sum >= all.Bytes || all.Bytes-sum > len(all.Tools)+400 { // commas and the envelope
		t.Errorf("tools add up to %d bytes of a %d-byte response", sum, all.Bytes)
	}
}

func TestCallInSearchMode(t *testing.T) {
	e, out, errb := testEnv(map[string]string{"TAIRSEACH_TOOL_MODE": "search"})
	code := run(context.Background(), e, []string{"call", "--manifests", "../../../manifests-example", "tairseach_find_tools", `{"query":"delete a note","limit":1}`})
	if code != exitOK || !strings.Contains(out.String(), `"name": "tairseach_notes_delete"`) {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	e, _, errb = testEnv(map[string]string{"TAIRSEACH_TOOL_MODE": "search"})
	if code := run(context.Background(), e, []string{"call", "--manifests", "../../../manifests-example", "tairseach_notes_list"}); code != exitUnknownTool || !strings.Contains(errb.String(), `unknown tool "tairseach_notes_list"`) {
		t.Errorf("a catalogue tool called directly in search mode: exit %d, stderr %s", code, errb)
	}
}
