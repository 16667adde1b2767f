package mcphttp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// mirrorTools is a ToolProvider of tools whose parameters clients mirror
// into headers; it counts the calls that reach it.
//
//	mirror  region (Mcp-Param-Region), priority (Priority), verbose
//	        (Verbose), where.zone (Zone); answers its arguments
//	plain   no such parameter
type mirrorTools struct{ calls atomic.Int32 }

var mirrorSet = protocol.NewToolSet([]protocol.Tool{
	{Name: "mirror", Description: "Mirrors parameters into headers.", InputSchema: jsontext.Value(`{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},` +
		`"verbose":{"type":"boolean","x-mcp-header":"Verbose"},` +
		`"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},"query":{"type":"string"}}}`),
		ParamHeaders: []protocol.ParamHeader{
			{Name: "Region", Path: []string{"region"}}, {Name: "Priority", Path: []string{"priority"}},
			{Name: "Verbose", Path: []string{"verbose"}}, {Name: "Zone", Path: []string{"where", "zone"}},
		}},
	{Name: "plain", Description: "Mirrors nothing.", InputSchema: jsontext.Value(`{"type":"object","properties":{"region":{"type":"string"}}}`)},
})

func (m *mirrorTools) Tools() *protocol.ToolSet { return mirrorSet }

func (m *mirrorTools) CallTool(_ context.Context, _ *protocol.Call, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	m.calls.Add(1)
	return protocol.TextResult(string(req.Arguments), false), nil
}

// mirrorBridge returns a bridge serving mirrorTools.
func mirrorBridge(t *testing.T) (*bridge, *mirrorTools) {
	tools := &mirrorTools{}
	return newBridge(t, Options{}, func(srv *protocol.Server) { srv.Tools = tools }), tools
}

// field is a header as it goes on the wire: its name as spelled.
type field struct{ name, value string }

// postFields posts body with the headers that mirror it, and fields
// added as they are spelled, each name as many times as it is given.
func (c *client) postFields(body string, fields ...field) *reply {
	c.t.Helper()
	c.check.ClientLine([]byte(body))
	req := c.request(c.t.Context(), http.MethodPost, body, nil)
	for _, f := range fields {
		req.Header[f.name] = append(req.Header[f.name], f.value)
	}
	return c.send(req)
}

func TestParamHeadersAreCheckedAgainstTheBody(t *testing.T) {
	t.Parallel()
	b, tools := mirrorBridge(t)
	region := func(v string) field { return field{"Mcp-Param-Region", v} }
	long := strings.Repeat("x", 300)
	tests := []struct {
		name   string
		tool   string // "mirror" when empty
		args   string
		fields []field
		code   int64  // the error; 0: the call is served
		msg    string // a part of the error's message
	}{
		// The spec's scenarios.
		{name: "a value provided needs its header, which matches", args: `{"region":"us-west1","query":"q"}`, fields: []field{region("us-west1")}},
		{name: "a null value takes no header", args: `{"region":null}`},
		{name: "a parameter not in the arguments takes no header", args: `{"query":"q"}`},
		{name: "no arguments take no header", args: `{}`},
		{name: "a value in the body without its header is refused", args: `{"region":"us-west1"}`,
			code: -32020, msg: `Header mismatch: the Mcp-Param-Region header is required: the body has "us-west1" at arguments.region`},

		// The spec's encoding examples.
		{name: "plain ASCII is sent as it is", args: `{"region":"us-west1"}`, fields: []field{region("us-west1")}},
		{name: "a value that is not ASCII is sent in base64", args: `{"region":"Hello, 世界"}`, fields: []field{region("=?base64?SGVsbG8sIOS4lueVjA==?=")}},
		{name: "a value with spaces at its ends is sent in base64", args: `{"region":" padded "}`, fields: []field{region("=?base64?IHBhZGRlZCA=?=")}},
		{name: "a value with a newline is sent in base64", args: `{"region":"line1\nline2"}`, fields: []field{region("=?base64?bGluZTEKbGluZTI=?=")}},
		{name: "a value like the sentinel is sent in base64", args: `{"region":"=?base64?literal?="}`, fields: []field{region("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")}},
		{name: "a value like the sentinel sent as it is is read as base64, and refused", args: `{"region":"=?base64?literal?="}`, fields: []field{region("=?base64?literal?=")},
			code: -32020, msg: `Mcp-Param-Region header value: bad base64`},
		{name: "a value that starts like the sentinel but does not end so is plain", args: `{"region":"=?base64?SGVsbG8="}`, fields: []field{region("=?base64?SGVsbG8=")}},
		{name: "a value that looks like base64 without the sentinel is plain", args: `{"region":"SGVsbG8="}`, fields: []field{region("SGVsbG8=")}},
		{name: "base64 without its padding is refused", args: `{"region":"Hello"}`, fields: []field{region("=?base64?SGVsbG8?=")}, code: -32020, msg: "bad base64"},
		{name: "base64 with characters outside its alphabet is refused", args: `{"region":"Hello"}`, fields: []field{region("=?base64?SGVs!!!bG8=?=")}, code: -32020, msg: "bad base64"},
		{name: "base64 of bytes that are not UTF-8 is refused", args: `{"region":"x"}`, fields: []field{region("=?base64?/w==?=")}, code: -32020, msg: "is not UTF-8 in base64"},
		{name: "a value that is not ASCII sent as it is is refused", args: `{"region":"Hello, 世界"}`, fields: []field{region("Hello, 世界")},
			code: -32020, msg: "Mcp-Param-Region header value: byte 0xe4 is not visible ASCII"},

		{name: "an argument's name is read with its escapes decoded", args: `{"\u0072egion":"us-west1"}`, code: -32020, msg: "the Mcp-Param-Region header is required"},
		{name: "a value is read with its escapes decoded", args: `{"region":"us-\u0077est1"}`, fields: []field{region("us-west1")}},

		// Mismatches.
		{name: "a header unlike the body is refused", args: `{"region":"us-west1"}`, fields: []field{region("us-east1")},
			code: -32020, msg: `Header mismatch: Mcp-Param-Region header value "us-east1" does not match body value "us-west1" at arguments.region`},
		{name: "a base64 header unlike the body is refused", args: `{"region":"us-west1"}`, fields: []field{region("=?base64?dXMtZWFzdDE=?=")},
			code: -32020, msg: `header value "us-east1" does not match`},
		{name: "values are compared with their case", args: `{"region":"us-west1"}`, fields: []field{region("US-WEST1")}, code: -32020},
		{name: "the header twice is refused", args: `{"region":"us-west1"}`, fields: []field{region("us-west1"), region("us-west1")},
			code: -32020, msg: "one Mcp-Param-Region header is allowed, not 2"},
		{name: "the header twice, spelled two ways, is refused", args: `{"region":"us-west1"}`, fields: []field{region("us-west1"), {"mcp-param-region", "us-west1"}},
			code: -32020, msg: "one Mcp-Param-Region header is allowed, not 2"},
		{name: "a header for a null value contradicts the body", args: `{"region":null}`, fields: []field{region("us-west1")},
			code: -32020, msg: "Mcp-Param-Region header sent, but the body has null at arguments.region"},
		{name: "a header for a value not in the arguments contradicts the body", args: `{"query":"q"}`, fields: []field{region("us-west1")},
			code: -32020, msg: "Mcp-Param-Region header sent, but the body has no arguments.region"},
		{name: "long values are cut in the message", args: `{"region":"` + long + `"}`, fields: []field{region("y" + long)},
			code: -32020, msg: `header value "y` + long[:63] + `…" does not match body value "` + long[:64] + `…"`},

		// Header names.
		{name: "the header's name is matched in lower case", args: `{"region":"us-west1"}`, fields: []field{{"mcp-param-region", "us-west1"}}},
		{name: "the header's name is matched in upper case", args: `{"region":"us-west1"}`, fields: []field{{"MCP-PARAM-REGION", "us-west1"}}},
		{name: "an Mcp-Param header no parameter has is ignored", args: `{"region":"us-west1"}`, fields: []field{region("us-west1"), {"Mcp-Param-Foo", "bar"}}},
		{name: "a tool without x-mcp-header ignores Mcp-Param headers", tool: "plain", args: `{"region":"us-west1"}`, fields: []field{region("elsewhere")}},

		// Integers and booleans.
		{name: "an integer is its decimal text", args: `{"priority":42}`, fields: []field{{"Mcp-Param-Priority", "42"}}},
		{name: "an integer matches its value with a fraction of zeros", args: `{"priority":42}`, fields: []field{{"Mcp-Param-Priority", "42.0"}}},
		{name: "an integer written with a fraction in the body matches its decimal text", args: `{"priority":42.0}`, fields: []field{{"Mcp-Param-Priority", "42"}}},
		{name: "a negative integer", args: `{"priority":-7}`, fields: []field{{"Mcp-Param-Priority", "-7"}}},
		{name: "another integer is refused", args: `{"priority":42}`, fields: []field{{"Mcp-Param-Priority", "43"}},
			code: -32020, msg: `Mcp-Param-Priority header value "43" does not match body value 42 at arguments.priority`},
		{name: "an integer header that is not a number is refused", args: `{"priority":42}`, fields: []field{{"Mcp-Param-Priority", "forty-two"}}, code: -32020},
		{name: "the largest safe integer", args: `{"priority":9007199254740991}`, fields: []field{{"Mcp-Param-Priority", "9007199254740991"}}},
		{name: "the smallest safe integer", args: `{"priority":-9007199254740991}`, fields: []field{{"Mcp-Param-Priority", "-9007199254740991"}}},
		{name: "an integer past the safe range cannot be mirrored", args: `{"priority":9007199254740992}`, fields: []field{{"Mcp-Param-Priority", "9007199254740992"}},
			code: -32602, msg: "tools/call: arguments.priority is 9007199254740992, which cannot be mirrored into the Mcp-Param-Priority header: its integers must be within ±(2^53−1)"},
		{name: "an integer past the safe range cannot be mirrored, header or not", args: `{"priority":-1e300}`, code: -32602},
		{name: "a fraction is left to the inputSchema", args: `{"priority":1.5}`},
		{name: "true is true", args: `{"verbose":true}`, fields: []field{{"Mcp-Param-Verbose", "true"}}},
		{name: "false is false", args: `{"verbose":false}`, fields: []field{{"Mcp-Param-Verbose", "false"}}},
		{name: "a boolean in capitals is refused", args: `{"verbose":true}`, fields: []field{{"Mcp-Param-Verbose", "True"}}, code: -32020},
		{name: "a boolean as a number is refused", args: `{"verbose":false}`, fields: []field{{"Mcp-Param-Verbose", "0"}},
			code: -32020, msg: `Mcp-Param-Verbose header value "0" does not match body value false at arguments.verbose`},

		// Nested parameters.
		{name: "a nested parameter is found at its path", args: `{"where":{"zone":"eu-1"}}`, fields: []field{{"Mcp-Param-Zone", "eu-1"}}},
		{name: "a nested parameter needs its header", args: `{"where":{"other":1,"zone":"eu-1"}}`,
			code: -32020, msg: `the Mcp-Param-Zone header is required: the body has "eu-1" at arguments.where.zone`},
		{name: "a nested parameter under a value that is not an object has no value", args: `{"where":"eu-1"}`},
		{name: "a value that is an object is left to the inputSchema", args: `{"region":{"name":"us-west1"}}`},

		{name: "every parameter is checked", args: `{"region":"us-west1","priority":3,"verbose":false,"where":{"zone":"eu-1"}}`,
			fields: []field{region("us-west1"), {"Mcp-Param-Priority", "3"}, {"Mcp-Param-Verbose", "false"}, {"Mcp-Param-Zone", "eu-1"}}},
		{name: "one wrong parameter of several is refused", args: `{"region":"us-west1","priority":3,"verbose":false,"where":{"zone":"eu-1"}}`,
			fields: []field{region("us-west1"), {"Mcp-Param-Priority", "3"}, {"Mcp-Param-Verbose", "false"}, {"Mcp-Param-Zone", "eu-2"}}, code: -32020, msg: "Mcp-Param-Zone"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := b.modern(t)
			before := tools.calls.Load()
			tool := tt.tool
			if tool == "" {
				tool = "mirror"
			}
			r := c.postFields(modern(i+1, "tools/call", fmt.Sprintf(`"name":%q,"arguments":%s`, tool, tt.args)), tt.fields...)
			called := tools.calls.Load() != before
			if tt.code == 0 {
				if r.status != http.StatusOK || r.errorCode() != 0 || !called {
					t.Fatalf("%d %s (tool called: %v), want the call served", r.status, r.body, called)
				}
				return
			}
			if r.status != http.StatusBadRequest || r.errorCode() != tt.code || called {
				t.Fatalf("%d %s (tool called: %v), want 400 with error %d and the tool not called", r.status, r.body, called, tt.code)
			}
			if !strings.Contains(string(r.body), fmt.Sprintf(`"id":%d`, i+1)) {
				t.Errorf("the error does not answer the request's id: %s", r.body)
			}
			var resp struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.Unmarshal(r.body, &resp, json.MatchCaseInsensitiveNames(true)); err != nil || !strings.Contains(resp.Error.Message, tt.msg) {
				t.Errorf("error %s, want it to say %q", r.body, tt.msg)
			}
		})
	}
}

// The check finds the first of a name given twice; the message is
// refused before it, so a header cannot match one while the tool gets
// the other.
func TestAnArgumentGivenTwiceIsRefusedFirst(t *testing.T) {
	t.Parallel()
	b, tools := mirrorBridge(t)
	for i, args := range []string{`{"region":"us-west1","region":"evil"}`, `{"region":"us-west1","\u0072egion":"evil"}`} {
		r := b.modern(t).postFields(modern(i+1, "tools/call", `"name":"mirror","arguments":`+args), field{"Mcp-Param-Region", "us-west1"})
		if r.status != http.StatusBadRequest || r.errorCode() != protocol.CodeInvalidRequest || tools.calls.Load() != 0 {
			t.Errorf("%s: %d %s (calls: %d), want 400 with error -32600 and no call", args, r.status, r.body, tools.calls.Load())
		}
	}
}

func TestALegacySessionIgnoresParamHeaders(t *testing.T) {
	t.Parallel()
	b, tools := mirrorBridge(t)
	c := b.legacy(t, protocol.Version20251125)
	r := c.postFields(call(2, "mirror", `{"region":"us-west1","priority":9007199254740993}`), field{"Mcp-Param-Region", "elsewhere"}, field{"Mcp-Param-Verbose", "true"})
	if r.status != http.StatusOK || r.errorCode() != 0 || tools.calls.Load() != 1 {
		t.Fatalf("%d %s (calls: %d), want the call served", r.status, r.body, tools.calls.Load())
	}
}

// A parameter's header is decoded as Mcp-Name is (see
// TestHeaderValuesDecode), here with values net/http would not carry as
// they are.
func TestParamHeadersAreDecodedAsMcpNameIs(t *testing.T) {
	t.Parallel()
	params := mirrorSet.ParamHeaders("mirror")
	body := []byte(modern(1, "tools/call", `"name":"mirror","arguments":{"region":" padded "}`))
	for _, tt := range []struct{ value, msg string }{
		{" padded ", `Header mismatch: Mcp-Param-Region header value: " padded " starts or ends with white space`},
		{" padded\n", "Header mismatch: Mcp-Param-Region header value: byte 0x0a is not visible ASCII"},
	} {
		e := checkParamHeaders(http.Header{"Mcp-Param-Region": {tt.value}}, params, body)
		if e == nil || e.Code != protocol.CodeHeaderMismatch || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%q: got %v, want -32020 saying %q", tt.value, e, tt.msg)
		}
	}
	if e := checkParamHeaders(http.Header{"Mcp-Param-Region": {"=?base64?IHBhZGRlZCA=?="}}, params, body); e != nil {
		t.Errorf("the same value in base64: %v", e)
	}
}

// The check's cost per tools/call: nothing for a tool without
// x-mcp-header, one read along each path for a tool with some.
func BenchmarkParamHeaders(b *testing.B) {
	args := `{"query":"` + strings.Repeat("SELECT 1; ", 100) + `","region":"us-west1","priority":3,"verbose":false,"where":{"zone":"eu-1"}}`
	body := []byte(modern(1, "tools/call", `"name":"mirror","arguments":`+args))
	header := http.Header{"Mcp-Param-Region": {"us-west1"}, "Mcp-Param-Priority": {"3"}, "Mcp-Param-Verbose": {"false"}, "Mcp-Param-Zone": {"eu-1"}}
	for _, bb := range []struct {
		name   string
		params []protocol.ParamHeader
	}{
		{"no x-mcp-header", mirrorSet.ParamHeaders("plain")},
		{"one", mirrorSet.ParamHeaders("mirror")[:1]},
		{"four", mirrorSet.ParamHeaders("mirror")},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if e := checkParamHeaders(header, bb.params, body); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}
