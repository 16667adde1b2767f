package protocol

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// askingTools has t_delete, which asks the user first and counts the
// times it went ahead, and t_other, which asks too.
func askingTools(done *atomic.Int32) *fakeTools {
	ask := func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
		if !call.CanConfirm() {
			return TextResult("no asker", true), nil
		}
		a, err := call.Confirm(ctx, Question{Message: "Delete it?"})
		if err != nil {
			return nil, err
		}
		if !a.Allowed {
			return TextResult("not allowed: "+a.Action, true), nil
		}
		done.Add(1)
		return TextResult("deleted", false), nil
	}
	return &fakeTools{set: NewToolSet([]Tool{{Name: "t_delete"}, {Name: "t_other"}}),
		calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){"t_delete": ask, "t_other": ask}}
}

const elicitCaps = `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}`

// modernCall is a 2026-07-28 tools/call of a client that can elicit.
func modernCall(id, tool, args, extra string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + extra +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + elicitCaps + `}}}`
}

// inputRequired reads an input_required result: its question and state.
func inputRequired(t *testing.T, line string) (message, state string) {
	t.Helper()
	var r struct {
		Result struct {
			ResultType    string
			RequestState  string
			InputRequests map[string]struct {
				Method string
				Params struct{ Message, Mode string }
			}
		}
	}
	if err := json.Unmarshal([]byte(line), &r, json.MatchCaseInsensitiveNames(true)); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	q := r.Result.InputRequests["confirm"]
	if r.Result.ResultType != "input_required" || q.Method != "elicitation/create" || q.Params.Mode != "form" || r.Result.RequestState == "" {
		t.Fatalf("not an input_required result with a confirmation: %s", line)
	}
	return q.Params.Message, r.Result.RequestState
}

func answered(yes bool) string {
	return fmt.Sprintf(`,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":%v}}}`, yes)
}

// The 2026-07-28 round trip: the call answers input_required, the retry
// with the user's yes and the state runs the tool once; every state that
// is not that one, unchanged and fresh, is refused before the tool runs.
func TestInputRequiredRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var done atomic.Int32
		srv := newTestServer(askingTools(&done))
		var mu sync.Mutex
		var refusals []string
		srv.Refused = func(call *Call, req *CallToolRequest, reason string) {
			mu.Lock()
			refusals = append(refusals, req.Name+" "+reason)
			mu.Unlock()
		}
		s := startSession(t, t.Context(), srv, ModernVersion)
		args := `{"id":"n1","tags":["a","b"]}`
		got := s.exchange(modernCall("1", "t_delete", args, ""))
		if len(got) != 1 {
			t.Fatalf("want one response, got %q", got)
		}
		msg, state := inputRequired(t, got[0])
		if msg != "Delete it?" || done.Load() != 0 {
			t.Fatalf("question %q, ran %d times", msg, done.Load())
		}
		refused := func(name, line, want string) {
			t.Helper()
			got := s.exchange(line)
			if len(got) != 1 || !strings.Contains(got[0], `"error":{"code":-32602`) || !strings.Contains(got[0], want) {
				t.Errorf("%s: got %q, want -32602 saying %q", name, got, want)
			}
		}
		sig := state[strings.IndexByte(state, '.')+1:]
		refused("another tool", modernCall("2", "t_other", args, answered(true)+`,"requestState":"`+state+`"`), "issued for another call")
		refused("changed arguments", modernCall("3", "t_delete", `{"id":"n2","tags":["a","b"]}`, answered(true)+`,"requestState":"`+state+`"`), "issued for another call")
		forged := base64.RawURLEncoding.EncodeToString([]byte(`{"m":"tools/call","n":"t_delete","a":"x","e":99999999999999,"r":"1"}`)) + "." + sig
		refused("a forged state", modernCall("4", "t_delete", args, answered(true)+`,"requestState":"`+forged+`"`), "not one this server issued")
		refused("garbage", modernCall("5", "t_delete", args, answered(true)+`,"requestState":"hello"`), "not one this server issued")
		// The same arguments, spaced and ordered differently, are the same call.
		same := `{ "tags" : ["a","b"], "id" : "n1" }`
		if got := s.exchange(modernCall("6", "t_delete", same, answered(true)+`,"requestState":"`+state+`"`)); len(got) != 1 || !strings.Contains(got[0], "deleted") {
			t.Fatalf("the retry with a yes: %q", got)
		}
		refused("a replayed state", modernCall("7", "t_delete", args, answered(true)+`,"requestState":"`+state+`"`), "used already")
		if done.Load() != 1 {
			t.Errorf("the tool ran %d times, want once", done.Load())
		}
		// A no: the tool is told, and does nothing.
		_, state = inputRequired(t, s.exchange(modernCall("8", "t_delete", args, ""))[0])
		if got := s.exchange(modernCall("9", "t_delete", args, answered(false)+`,"requestState":"`+state+`"`)); !strings.Contains(got[0], "not allowed: accept") {
			t.Errorf("the retry with a no: %q", got)
		}
		// No answer in the retry: asked again, with a new state.
		_, state = inputRequired(t, s.exchange(modernCall("10", "t_delete", args, ""))[0])
		_, again := inputRequired(t, s.exchange(modernCall("11", "t_delete", args, `,"requestState":"`+state+`"`))[0])
		if again == state {
			t.Error("asked again with the state that was spent")
		}
		// A state past its time.
		time.Sleep(DefaultAskTimeout + time.Second)
		refused("an expired state", modernCall("12", "t_delete", args, answered(true)+`,"requestState":"`+again+`"`), "expired")
		if done.Load() != 1 {
			t.Errorf("the tool ran %d times, want once", done.Load())
		}
		s.close()
		want := []string{"t_other other_call", "t_delete other_call", "t_delete forged", "t_delete forged", "t_delete replayed", "t_delete expired"}
		if diff := cmp.Diff(want, refusals); diff != "" {
			t.Errorf("the refusals told (-want +got):\n%s", diff)
		}
	})
}

// A state is bound to the exact arguments it was issued for: numbers by
// their exact decimal value, whatever their spelling, never up to a
// double's precision.
func TestAStateRunsOnlyItsExactArguments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var done atomic.Int32
		s := startSession(t, t.Context(), newTestServer(askingTools(&done)), ModernVersion)
		for i, tt := range []struct {
			issued, sent string
			runs         bool
		}{
			{`{"n":9007199254740992}`, `{"n":9007199254740993}`, false},
			{`{"n":1}`, `{"n":1.0000000000000001}`, false},
			{`{"n":0.1}`, `{"n":0.1000000000000000055511151231257827}`, false},
			{`{"n":1}`, `{"n":1.0}`, true},
			{`{"n":1}`, `{"n":1e0}`, true},
			{`{"n":1500,"m":[-0.5]}`, `{ "m" : [ -5E-1 ], "n" : 1.5e3 }`, true},
		} {
			id := fmt.Sprint(10 + i)
			_, state := inputRequired(t, s.exchange(modernCall(id, "t_delete", tt.issued, ""))[0])
			before := done.Load()
			got := s.exchange(modernCall(id+"1", "t_delete", tt.sent, answered(true)+`,"requestState":"`+state+`"`))
			ran := done.Load() > before
			if ran != tt.runs || !tt.runs && !strings.Contains(got[0], "issued for another call") {
				t.Errorf("a state for %s, sent with %s: ran %v, want %v (%q)", tt.issued, tt.sent, ran, tt.runs, got)
			}
		}
		s.close()
	})
}

// A client that declared no elicitation is not asked: the tool gets no
// Asker, in either era.
func TestAClientWithoutElicitationIsNotAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var done atomic.Int32
		srv := newTestServer(askingTools(&done))
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(initLine(1, Version20251125))
		if got := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_delete"}}`); !strings.Contains(got[0], "no asker") {
			t.Errorf("legacy: %q", got)
		}
		if got := s.exchange(modernReq("3", "tools/call", `"name":"t_delete"`)); !strings.Contains(got[0], "no asker") {
			t.Errorf("modern: %q", got)
		}
		s.close()
	})
}

// In the legacy era the server asks with a request of its own, whose id
// is its own; the client's response reaches the call, a response to no
// request of the server's is dropped, and a call cancelled while it asks
// withdraws the question.
func TestElicitationRequestsAndTheirResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var done atomic.Int32
		srv := newTestServer(askingTools(&done))
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
		got := s.exchange(`{"jsonrpc":"2.0","id":"tairseach-1","method":"tools/call","params":{"name":"t_delete"}}`)
		var req struct {
			ID     jsontext.Value
			Method string
			Params struct {
				Mode, Message   string
				RequestedSchema struct{ Required []string }
			}
		}
		// The client's id is the one the server gives its first request:
		// requests and responses are told apart by their members, so the
		// two never meet.
		if len(got) != 1 || json.Unmarshal([]byte(got[0]), &req, json.MatchCaseInsensitiveNames(true)) != nil ||
			req.Method != "elicitation/create" || req.Params.Mode != "form" || req.Params.Message != "Delete it?" || !strings.HasPrefix(string(req.ID), `"tairseach-`) {
			t.Fatalf("want an elicitation/create with an id of the server's, got %q", got)
		}
		// A response to an id the server never used changes nothing.
		if got := s.exchange(`{"jsonrpc":"2.0","id":"tairseach-999","result":{"action":"accept","content":{"confirm":true}}}`); len(got) != 0 {
			t.Errorf("a stray response was answered: %q", got)
		}
		got = s.exchange(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"confirm":true}}}`)
		if len(got) != 1 || !strings.Contains(got[0], `"id":"tairseach-1","result"`) || !strings.Contains(got[0], "deleted") || done.Load() != 1 {
			t.Fatalf("the call after a yes: %q", got)
		}
		// Cancelled while it asks: the question is withdrawn.
		got = s.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_delete"}}`)
		json.Unmarshal([]byte(got[0]), &req, json.MatchCaseInsensitiveNames(true))
		got = s.exchange(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
		if len(got) != 1 || !strings.Contains(got[0], `"method":"notifications/cancelled"`) || !strings.Contains(got[0], `"requestId":`+string(req.ID)) {
			t.Errorf("want the question withdrawn, got %q", got)
		}
		s.close()
		if done.Load() != 1 {
			t.Errorf("the tool ran %d times, want once", done.Load())
		}
	})
}
