package protocol

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Two sessions of one server, one of them given a view of its own (a
// named client's), each list and call what they were given, and each
// call is for its session's principal.
func TestASessionServesItsOwnView(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		whoCalls := func(_ context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
			return TextResult(call.Principal().String(), false), nil
		}
		all := &fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){"t_plain": whoCalls}}
		narrow := &fakeTools{set: NewToolSet([]Tool{{Name: "t_plain", InputSchema: jsontext.Value(`{"type":"object"}`)}}),
			calls: all.calls}
		srv := newTestServer(all)
		srv.Resources = newFakeContent()
		owner := startSession(t, t.Context(), srv, Version20251125)
		client := startSessionWith(t, t.Context(), srv, Version20251125, nil, SessionOptions{
			Principal: Principal{Kind: PrincipalClient, ID: "cursor"},
			Providers: &Providers{Tools: narrow},
		})
		for _, s := range []*testSession{owner, client} {
			s.exchange(initLine(1, Version20251125))
		}
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		if got := owner.exchange(list); len(got) != 1 || !strings.Contains(got[0], `"t_echo"`) {
			t.Errorf("the server's own view: %.300s", got)
		}
		client.expect(list, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t_plain","inputSchema":{"type":"object"}}]}}`)
		call := func(name string) string {
			return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
		}
		client.expect(call("t_plain"), `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"client:cursor"}]}}`)
		owner.expect(call("t_plain"), `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"process"}]}}`)
		if got := client.exchange(call("t_echo")); len(got) != 1 || !strings.Contains(got[0], `"code":-32602`) {
			t.Errorf("a tool outside the view: %.300s", got)
		}
		// A field the view leaves nil is the server's.
		if got := client.exchange(`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`); len(got) != 1 || !strings.Contains(got[0], `"test://text"`) {
			t.Errorf("the server's resources: %.300s", got)
		}
	})
}

// A call the session's Admit refuses is answered at once and never runs:
// a tool call with an isError result saying when to try again, any other
// call with CodeRateLimited and data.retryAfterMs; requests that are not
// calls are not counted.
func TestCallsOverTheRateAreRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ran := 0
		ft := &fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
			"t_plain": func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error) {
				ran++
				return TextResult("ran", false), nil
			},
		}}
		srv := newTestServer(ft)
		srv.Resources = newFakeContent()
		admitted := 0
		s := startSessionWith(t, t.Context(), srv, Version20251125, nil, SessionOptions{Admit: func() (time.Duration, bool) {
			if admitted == 1 {
				return 1500 * time.Millisecond, false
			}
			admitted++
			return 0, true
		}})
		s.exchange(initLine(1, Version20251125))
		if got := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); len(got) != 1 || strings.Contains(got[0], "error") {
			t.Errorf("a list is not a call, never refused: %.200s", got)
		}
		call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_plain","arguments":{}}}`
		s.expect(call, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ran"}]}}`)
		s.expect(call, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Too many calls: this client is over its rate of calls, so nothing was run. Try again in 2s."}],"isError":true}}`)
		s.expect(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://text"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"too many calls: this client is over its rate of calls; try again in 2s","data":{"retryAfterMs":1500}}}`)
		if ran != 1 {
			t.Errorf("the tool ran %d times, want once", ran)
		}
	})
}

// A session whose options deny sampling and elicitation refuses a
// call's requests of them, saying the client's policy forbids it.
func TestASessionsPolicyDeniesSamplingAndElicitation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTools{set: testTools(), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
			"t_plain": func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
				_, errS := call.Sample(ctx, "q", jsontext.Value(`{}`))
				_, errE := call.Elicit(ctx, "q", jsontext.Value(`{}`))
				if !errors.Is(errS, ErrNotSupported) || !errors.Is(errE, ErrNotSupported) {
					return TextResult("not ErrNotSupported", true), nil
				}
				return TextResult(errS.Error()+" | "+errE.Error(), false), nil
			},
		}}
		s := startSessionWith(t, t.Context(), newTestServer(ft), Version20251125, nil, SessionOptions{DenySampling: true, DenyElicitation: true})
		s.exchange(initLine(1, Version20251125))
		s.expect(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_plain","arguments":{}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"not supported here: this client's policy does not let the backend ask the client's model for a completion | not supported here: this client's policy does not let the backend ask the user to fill in a form"}]}}`)
	})
}

func TestRetryAfterMs(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{{0, 1}, {-time.Second, 1}, {time.Microsecond, 1}, {1500 * time.Millisecond, 1500}, {1500*time.Millisecond + 1, 1501}} {
		if got := RetryAfterMs(tt.d); got != tt.want {
			t.Errorf("RetryAfterMs(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

// Inspect counts the calls a message holds, which a rate of calls counts
// before the message reaches a session.
func TestInspectCountsCalls(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, 1},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x"}}`, 1},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`, 0}, // a notification runs nothing
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}},{"jsonrpc":"2.0","id":2,"method":"ping"},` +
			`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p"}},{"jsonrpc":"2.0","id":4,"method":"completion/complete"}]`, 3},
	} {
		env, err := Inspect([]byte(tt.msg))
		if err != nil || env.Calls != tt.want {
			t.Errorf("Inspect(%.60s): %d calls, %v; want %d", tt.msg, env.Calls, err, tt.want)
		}
	}
}
