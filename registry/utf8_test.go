package registry

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

func TestAValidResultIsNotCopied(t *testing.T) {
	reply := jsontext.Value(`{"a":"é"}`)
	r, _ := newCallRegistry(t, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return reply, nil
	})
	res := call(t, r, "t_notes_any", `{}`)
	if len(res.StructuredContent) == 0 || &res.StructuredContent[0] != &reply[0] {
		t.Errorf("structuredContent %s is a copy of the backend's result", res.StructuredContent)
	}
	if text := res.Content[0].JSON; len(text) == 0 || &text[0] != &reply[0] {
		t.Errorf("the text %q is not the backend's result, uncopied", text)
	}
}

// A backend error's data is cut, at a character's boundary, past maxDetails.
func TestALongBackendErrorIsCutBetweenCharacters(t *testing.T) {
	longData := `"` + strings.Repeat("é", 2000) + `"` // the cut at 2048 bytes falls inside an é
	tests := []struct {
		name     string
		err      *socketclient.RPCError
		wantText []string
	}{
		{name: "long data is cut between characters",
			err:      &socketclient.RPCError{Code: -1, Message: "m", Data: jsontext.Value(longData)},
			wantText: []string{"Details: " + longData[:2047] + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := string(tt.err.Data)
			r, _ := newCallRegistry(t, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
				return nil, tt.err
			})
			res := call(t, r, "t_notes_any", `{}`)
			text := resultText(res)
			if !res.IsError {
				t.Errorf("IsError not set: %s", text)
			}
			if !utf8.ValidString(text) {
				t.Errorf("text %q is not valid UTF-8", text)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(text, w) {
					t.Errorf("text %.200q lacks %.200q", text, w)
				}
			}
			if string(tt.err.Data) != data {
				t.Errorf("the backend's error data was changed to %q", tt.err.Data)
			}
		})
	}
}

// What a client or a backend named is logged as a field of one line:
// controls, bidi formatting characters and line separators replaced.
func TestTheLogNamesAClientsTextOnOneLine(t *testing.T) {
	if got, want := logURI("notes://a\x1b[2J\u202e\nb\u2028\xff"), "notes://a\uFFFD[2J\uFFFD\uFFFDb\uFFFD\uFFFD"; got != want {
		t.Errorf("logURI = %q, want %q", got, want)
	}
	vs := violationsForLog([]manifest.Violation{{Pointer: "/a\x1b[2J\u202eb", Keyword: "type"}}, "result")
	if len(vs) != 1 || strings.ContainsAny(vs[0], "\x1b\u202e") || !strings.HasSuffix(vs[0], "b (type)") {
		t.Errorf("violations logged as %q", vs)
	}
}
