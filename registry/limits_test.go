package registry

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// hostileManifest has schemas whose checks the schema library makes
// expensive: big-number bounds and recursion.
var hostileManifest = `{"id":"h","tools":[
 {"name":"h.bounded","description":"A bounded number.","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":100}}}},
 {"name":"h.tree","description":"A recursive shape.","inputSchema":{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"c":{"$ref":"#/$defs/node"}},"additionalProperties":false}}},
  "outputSchema":{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"c":{"$ref":"#/$defs/node"}},"additionalProperties":false}}}},
 {"name":"h.groups","description":"Groups and items.","inputSchema":` + groupsSchema + `,"outputSchema":` + groupsSchema + `},
 {"name":"h.twice","description":"A schema that applies itself to one value twice, thirty times over.","inputSchema":` + twiceSchema + `}
],"implementation":{"methods":{"h.bounded":"h.bounded","h.tree":"h.tree","h.groups":"h.groups","h.twice":"h.twice"}}}`

// groupsSchema is a tree of groups and items that both have children:
// each alternative descends into the same children, so the schema
// library's work doubles with each level of the value.
const groupsSchema = `{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"oneOf":[
 {"type":"object","properties":{"kind":{"const":"group"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kind"]},
 {"type":"object","properties":{"kind":{"const":"item"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kind"]}]}}}`

// groupTree returns a value for groupsSchema, depth groups deep.
func groupTree(depth int) string {
	return strings.Repeat(`{"kind":"group","children":[`, depth) + `{"kind":"item"}` + strings.Repeat(`]}`, depth)
}

// twiceSchema applies to "s" thirty levels of alternatives, each made of
// the level below twice: 2^30 steps, however small the value.
var twiceSchema = func() string {
	defs := []string{`"d0":{"type":"string"}`}
	for i := 1; i <= 30; i++ {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"allOf":[{"$ref":"#/$defs/d%d"}]}],"not":{"const":"x"}}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{"s":{"$ref":"#/$defs/d30"}},"$defs":{%s}}`, strings.Join(defs, ","))
}()

func hostileRegistry(t *testing.T, timeout time.Duration, reply string) (*Registry, *fakeBackend) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "h.json"), hostileManifest)
	be := &fakeBackend{fn: func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return jsontext.Value(reply), nil
	}}
	return New(Options{Dirs: []string{dir}, Backend: be, CallTimeout: timeout, Hints: testHints}), be
}

func nested(key string, depth int, leaf string) string {
	return strings.Repeat(`{"`+key+`":`, depth) + leaf + strings.Repeat("}", depth)
}

// An argument or result that would cost the schema library seconds to
// minutes is refused at once, naming the limit it passed; nothing reaches
// the backend.
func TestValuesPastTheLimitsAreRefusedNamingTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args, want string
	}{
		{"an integer of 2,000,000 digits", "h_bounded", `{"n":` + strings.Repeat("9", 2_000_000) + `}`, "--max-number-length"},
		{"arguments nested 2,000 deep against a recursive schema", "h_tree", nested("c", 2000, "1"), "--max-depth"},
		{"9 MiB of arguments", "h_bounded", `{"s":"` + strings.Repeat("a", 9<<20) + `"}`, "--max-checked-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, be := hostileRegistry(t, time.Minute, `{}`)
			res := call(t, r, tc.tool, tc.args)
			if text := resultText(res); !res.IsError || !strings.Contains(text, tc.want) || !strings.Contains(text, "Nothing was sent to the backend") {
				t.Errorf("result (error %v): %.300s", res.IsError, text)
			}
			if n := len(be.recorded()); n != 0 {
				t.Errorf("backend called %d times", n)
			}
		})
	}
	t.Run("a result nested 2,000 deep against a recursive outputSchema", func(t *testing.T) {
		r, _ := hostileRegistry(t, time.Minute, nested("c", 2000, "{}"))
		res := call(t, r, "h_tree", `{}`)
		if text := resultText(res); !res.IsError || !strings.Contains(text, "--max-depth") {
			t.Errorf("result (error %v): %.300s", res.IsError, text)
		}
	})
}

// The call timeout bounds the checks too: a check still running when it
// passes is answered at once, and so is a cancelled call.
func TestACheckPastTheDeadlineIsAnsweredAtOnce(t *testing.T) {
	// Within the limits, but more than a millisecond to decode and check.
	args := `{"s":"` + strings.Repeat("a", 7<<20) + `"}`
	r, be := hostileRegistry(t, time.Millisecond, `{}`)
	res := call(t, r, "h_bounded", args)
	if text := resultText(res); !res.IsError || !strings.Contains(text, "took longer than 1ms while its arguments were checked") {
		t.Errorf("result (error %v): %.300s", res.IsError, text)
	}
	if n := len(be.recorded()); n != 0 {
		t.Errorf("backend called %d times", n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := r.CallTool(ctx, aCall(), &protocol.CallToolRequest{Name: "h_bounded", Arguments: jsontext.Value(args)})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "cancelled") {
		t.Errorf("cancelled call: %v, %+v", err, res)
	}
}

// A check whose schema applies itself to the same parts of a value over
// and over, exponentially in the value's depth, is stopped at a bound
// proportional to the value and the schema, long before the deadline.
func TestAnExponentialCheckIsStoppedAtItsBound(t *testing.T) {
	const want = "takes more steps to check than its size and the schema's justify"
	t.Run("arguments 24 levels deep", func(t *testing.T) {
		r, be := hostileRegistry(t, time.Hour, `{}`)
		res := call(t, r, "h_groups", groupTree(24))
		if text := resultText(res); !res.IsError || !strings.Contains(text, want) || !strings.Contains(text, "Nothing was sent to the backend") {
			t.Errorf("result (error %v): %.300s", res.IsError, text)
		}
		if n := len(be.recorded()); n != 0 {
			t.Errorf("backend called %d times", n)
		}
	})
	t.Run("a result 24 levels deep", func(t *testing.T) {
		r, _ := hostileRegistry(t, time.Hour, groupTree(24))
		res := call(t, r, "h_groups", groupTree(1))
		if text := resultText(res); !res.IsError || !strings.Contains(text, "cannot be checked against the tool's outputSchema") || !strings.Contains(text, want) {
			t.Errorf("result (error %v): %.300s", res.IsError, text)
		}
	})
}

// A check that the bounds on work leave running (its value is padded to
// raise them) stops at the call's deadline and is answered then.
func TestALongCheckStopsAtTheDeadline(t *testing.T) {
	r, be := hostileRegistry(t, 100*time.Millisecond, `{}`)
	// Under the 64 KiB that were checked on the call's own goroutine,
	// where nothing could stop them.
	args := `{"s":"a","pad":[` + strings.Repeat("0,", 30_000) + `0]}`
	res := call(t, r, "h_twice", args)
	if text := resultText(res); !res.IsError || !strings.Contains(text, "took longer than 100ms while its arguments were checked") {
		t.Errorf("result (error %v): %.300s", res.IsError, text)
	}
	if n := len(be.recorded()); n != 0 {
		t.Errorf("backend called %d times", n)
	}
}
