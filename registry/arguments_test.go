package registry

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// Arguments are always checked by the schema library, with the one JSON
// policy: a repeated name or a string that is not UTF-8 is refused before
// anything reaches the backend, also by a tool whose schema takes any
// object (the backend might read the other of two values).
func TestArgumentsTheJSONPolicyRefusesAreNotSent(t *testing.T) {
	for _, tt := range []struct{ name, tool, args, want string }{
		{"a repeated name, for a tool that takes any object", "t_notes_any", `{"a":1,"a":2}`, "duplicate object member name"},
		{"a repeated name, for a tool with properties", "t_notes_create", `{"title":"x","title":7}`, "duplicate object member name"},
		{"invalid UTF-8", "t_notes_any", "{\"a\":\"\xff\"}", "invalid UTF-8"},
		{"an array, for a tool that takes any object", "t_notes_any", `[1]`, "expected object, but got array"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, be := newCallRegistry(t, func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
				return jsontext.Value(`{}`), nil
			})
			res := call(t, r, tt.tool, tt.args)
			if text := resultText(res); !res.IsError || !strings.Contains(text, "Invalid arguments for "+tt.tool) || !strings.Contains(text, tt.want) {
				t.Errorf("result (error %v): %s\nwant an error naming %q", res.IsError, text, tt.want)
			}
			if n := len(be.recorded()); n != 0 {
				t.Errorf("backend called %d times", n)
			}
		})
	}
}
