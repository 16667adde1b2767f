package registry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/socketclient"
)

func TestInvalidUTF8InAResultIsCleanedInBothCopies(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		reply string
		want  string
	}{
		{name: "each invalid byte becomes U+FFFD", tool: "t_notes_any",
			reply: "{\"a\":\"\xff\xfe\"}", want: `{"a":"` + "\uFFFD\uFFFD" + `"}`},
		{name: "valid characters around them are kept", tool: "t_notes_any",
			reply: "{\"a\":\"é\xc3x\",\"b\":[\"\xed\xa0\x80\"]}", want: `{"a":"é` + "\uFFFD" + `x","b":["` + "\uFFFD\uFFFD\uFFFD" + `"]}`},
		{name: "a result checked against an outputSchema is cleaned first", tool: "t_notes_create",
			reply: "{\"id\":\"n\x80\"}", want: `{"id":"n` + "\uFFFD" + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newCallRegistry(t, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
				return jsontext.Value(tt.reply), nil
			})
			res := call(t, r, tt.tool, `{"title":"a"}`)
			if res.IsError {
				t.Fatalf("IsError set: %s", resultText(res))
			}
			sc, text := string(res.StructuredContent), resultText(res)
			if !utf8.ValidString(sc) || !utf8.ValidString(text) {
				t.Errorf("structuredContent %q or text %q is not valid UTF-8", sc, text)
			}
			if sc != tt.want || text != tt.want {
				t.Errorf("structuredContent = %q, text = %q; want both %q", sc, text, tt.want)
			}
			if !json.Valid(res.StructuredContent) {
				t.Errorf("structuredContent %q is not valid JSON", sc)
			}
		})
	}
}

func TestAValidResultIsNotCopied(t *testing.T) {
	reply := jsontext.Value(`{"a":"é"}`)
	r, _ := newCallRegistry(t, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return reply, nil
	})
	res := call(t, r, "t_notes_any", `{}`)
	if len(res.StructuredContent) == 0 || &res.StructuredContent[0] != &reply[0] {
		t.Errorf("structuredContent %s is a copy of the backend's result", res.StructuredContent)
	}
	if text := res.Content[0].Text; text != string(reply) {
		t.Errorf("the text %q is not the backend's result", text)
	}
}

func TestInvalidUTF8InABackendErrorIsCleaned(t *testing.T) {
	longData := `"` + strings.Repeat("é", 2000) + `"` // the cut at 2048 bytes falls inside an é
	tests := []struct {
		name     string
		err      *socketclient.RPCError
		wantText []string
	}{
		{name: "invalid bytes in data become U+FFFD",
			err:      &socketclient.RPCError{Code: -32011, Message: "Permission denied", Data: jsontext.Value("{\"why\":\"\xff\xfe\"}")},
			wantText: []string{"Permission denied", "Details: {\"why\":\"\uFFFD\uFFFD\"}"}},
		{name: "invalid bytes in the message become U+FFFD",
			err:      &socketclient.RPCError{Code: -1, Message: "bad \xc3 byte"},
			wantText: []string{"bad \uFFFD byte"}},
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
