package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
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

// The questions a test provider asks: its name, what it asks, and with
// what.
var (
	askName  = jsontext.Value(`{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)
	askModel = jsontext.Value(`{"messages":[{"role":"user","content":{"type":"text","text":"Capital of France?"}}],"maxTokens":20}`)
)

// askingProvider has t_ask, which asks the client for a name, a
// completion and its roots, one after the other, and answers what each
// gave (or the error's code and data); and t_three, which asks the three
// at once.
func askingProvider() *fakeTools {
	describe := func(res jsontext.Value, err error) string {
		var e *Error
		if errors.As(err, &e) {
			return fmt.Sprintf("error %d %s", e.Code, e.Data)
		}
		if err != nil {
			return "error " + err.Error()
		}
		return string(res)
	}
	return &fakeTools{set: NewToolSet([]Tool{{Name: "t_ask"}, {Name: "t_three"}}), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
		"t_ask": func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
			n, err1 := call.Elicit(ctx, "user_name", askName)
			m, err2 := call.Sample(ctx, "capital", askModel)
			r, err3 := call.Roots(ctx, "roots", nil)
			return TextResult(strings.Join([]string{describe(n, err1), describe(m, err2), describe(r, err3)}, " | "), false), nil
		},
		"t_three": func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
			var wg sync.WaitGroup
			got := make([]string, 3)
			for i, ask := range []func() (jsontext.Value, error){
				func() (jsontext.Value, error) { return call.Elicit(ctx, "user_name", askName) },
				func() (jsontext.Value, error) { return call.Sample(ctx, "greeting", askModel) },
				func() (jsontext.Value, error) { return call.Roots(ctx, "client_roots", nil) },
			} {
				wg.Go(func() { got[i] = describe(ask()) })
			}
			wg.Wait()
			return TextResult(strings.Join(got, " | "), false), nil
		},
	}}
}

const (
	answerName  = `{"action":"accept","content":{"name":"Ann"}}`
	answerModel = `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}`
	answerRoots = `{"roots":[{"uri":"file:///home/ann","name":"home"}]}`
)

// serverRequest reads a request of the server's: its id and method.
func serverRequest(t *testing.T, line string) (id, method string) {
	t.Helper()
	var m struct {
		ID     jsontext.Value `json:"id"`
		Method string         `json:"method"`
	}
	if err := json.Unmarshal([]byte(line), &m, json.RejectUnknownMembers(false)); err != nil || m.ID == nil || m.Method == "" {
		t.Fatalf("not a request of the server's: %s", line)
	}
	return string(m.ID), m.Method
}

// Up to 2025-11-25 a provider's questions are requests of the server's on
// the call's stream, each answered by the client in turn.
func TestAProviderAsksItsClientInTheLegacyEra(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startSession(t, t.Context(), newTestServer(askingProvider()), Version20251125)
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`)
		out := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_ask"}}`)
		var asked []string
		for _, answer := range []string{answerName, answerModel, answerRoots} {
			if len(out) != 1 {
				t.Fatalf("want one request of the server's, got %q", out)
			}
			id, method := serverRequest(t, out[0])
			asked = append(asked, method)
			out = s.exchange(`{"jsonrpc":"2.0","id":` + id + `,"result":` + answer + `}`)
		}
		if diff := cmp.Diff([]string{"elicitation/create", "sampling/createMessage", "roots/list"}, asked); diff != "" {
			t.Errorf("asked (-want +got):\n%s", diff)
		}
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":%q}]}}`, answerName+" | "+answerModel+" | "+answerRoots)
		if len(out) != 1 || out[0] != want {
			t.Errorf("result %q, want %s", out, want)
		}
		s.close()
	})
}

// A question the client did not declare it can answer is not asked: the
// provider gets -32021 with the capability it needs, in every era.
func TestAQuestionTheClientCannotAnswerIsNotAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		want := `error -32021 {"requiredCapabilities":{"elicitation":{"form":{}}}} | error -32021 {"requiredCapabilities":{"sampling":{}}} | error -32021 {"requiredCapabilities":{"roots":{}}}`
		legacy := startSession(t, t.Context(), newTestServer(askingProvider()), Version20251125)
		legacy.exchange(initLine(1, Version20251125))
		out := legacy.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_ask"}}`)
		if len(out) != 1 || !strings.Contains(out[0], fmt.Sprintf("%q", want)[1:len(want)]) {
			t.Errorf("legacy: %q, want the three refusals %s", out, want)
		}
		legacy.close()
		modern := startSession(t, t.Context(), newTestServer(askingProvider()), ModernVersion)
		out = modern.exchange(modernReq("3", "tools/call", `"name":"t_ask"`))
		if len(out) != 1 || !strings.Contains(out[0], fmt.Sprintf("%q", want)[1:len(want)]) {
			t.Errorf("modern: %q, want the three refusals %s", out, want)
		}
		modern.close()
	})
}

// Before 2025-06-18 there is no elicitation: a client that declares it
// anyway is not sent elicitation/create (-32021 for the provider), and is
// asked what its version has: sampling and roots.
func TestNoElicitationBeforeItsVersion(t *testing.T) {
	for _, version := range []string{Version20241105, Version20250326} {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := startSession(t, t.Context(), newTestServer(askingProvider()), version)
				s.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`)
				out := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_ask"}}`)
				var asked []string
				for _, answer := range []string{answerModel, answerRoots} {
					if len(out) != 1 {
						t.Fatalf("want one request of the server's, got %q", out)
					}
					id, method := serverRequest(t, out[0])
					asked = append(asked, method)
					out = s.exchange(`{"jsonrpc":"2.0","id":` + id + `,"result":` + answer + `}`)
				}
				if diff := cmp.Diff([]string{"sampling/createMessage", "roots/list"}, asked); diff != "" {
					t.Errorf("asked (-want +got):\n%s", diff)
				}
				want := `error -32021 {"requiredCapabilities":{"elicitation":{"form":{}}}} | ` + answerModel + " | " + answerRoots
				if len(out) != 1 || !strings.Contains(out[0], fmt.Sprintf("%q", want)) {
					t.Errorf("result %q, want %s", out, want)
				}
				s.close()
			})
		})
	}
}

// A sub-capability the params need is required too: sampling with tools
// needs sampling.tools.
func TestASubCapabilityIsRequired(t *testing.T) {
	caps := capsOf(jsontext.Value(`{"sampling":{},"elicitation":{"form":{}}}`))
	for _, tt := range []struct {
		method, params, want string
	}{
		{"sampling/createMessage", `{"messages":[],"maxTokens":1}`, ""},
		{"sampling/createMessage", `{"messages":[],"maxTokens":1,"tools":[]}`, `{"sampling":{"tools":{}}}`},
		{"sampling/createMessage", `{"messages":[],"maxTokens":1,"includeContext":"thisServer"}`, `{"sampling":{"context":{}}}`},
		{"sampling/createMessage", `{"messages":[],"maxTokens":1,"includeContext":"none"}`, ""},
		{"elicitation/create", `{"message":"x","requestedSchema":{"type":"object"}}`, ""},
		{"elicitation/create", `{"mode":"url","message":"x","url":"https://x","elicitationId":"1"}`, `{"elicitation":{"url":{}}}`},
		{"roots/list", `{}`, `{"roots":{}}`},
	} {
		if got := string(caps.missing(tt.method, jsontext.Value(tt.params))); got != tt.want {
			t.Errorf("%s %s: missing %s, want %q", tt.method, tt.params, got, tt.want)
		}
	}
}

// Every wait for a person is bounded by AskTimeout, and the call's own
// time stops meanwhile: a provider whose call timeout is shorter than
// the user's answer still goes on; one nobody answers gets -32001; one
// whose call is cancelled meanwhile gets -32000.
func TestAQuestionWaitsForAPersonNotTheCallsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTools{set: NewToolSet([]Tool{{Name: "t_slow_yes"}}), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
			"t_slow_yes": func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
				ctx, cancel := call.WithTimeout(ctx, time.Second)
				defer cancel()
				res, err := call.Elicit(ctx, "user_name", askName)
				if err != nil {
					var e *Error
					errors.As(err, &e)
					return TextResult(fmt.Sprintf("error %d", e.Code), true), nil
				}
				time.Sleep(500 * time.Millisecond) // the call's own time, which is left
				if ctx.Err() != nil {
					return TextResult("the call's time ran out while the user was asked", true), nil
				}
				return TextResult(string(res), false), nil
			},
		}}
		srv := newTestServer(ft)
		srv.AskTimeout = time.Minute
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)

		id, _ := serverRequest(t, s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_slow_yes"}}`)[0])
		time.Sleep(30 * time.Second) // the user thinks, far past the call's second
		if out := s.exchange(`{"jsonrpc":"2.0","id":` + id + `,"result":` + answerName + `}`); len(out) != 0 {
			t.Fatalf("answered before the call's own time was up: %q", out)
		}
		time.Sleep(time.Second)
		if out := s.step(); len(out) != 1 || !strings.Contains(out[0], `\"Ann\"`) {
			t.Errorf("a slow answer: %q, want the call to go on", out)
		}

		s.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_slow_yes"}}`)
		time.Sleep(time.Minute + time.Second)
		out := s.step()
		if len(out) != 2 || !strings.Contains(out[0], "notifications/cancelled") || !strings.Contains(out[1], "error -32001") {
			t.Errorf("no answer: %q, want the question withdrawn and -32001", out)
		}

		s.exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t_slow_yes"}}`)
		s.exchange(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`)
		s.close()
	})
}

// modernCallWith is a 2026-07-28 tools/call whose client declared caps.
func modernCallWith(id, tool, caps, extra string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}` + extra +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
}

// inputRound reads an input_required result: its questions' names and
// methods, and its state.
func inputRound(t *testing.T, line string) (map[string]string, string) {
	t.Helper()
	var r struct {
		Result struct {
			ResultType    string `json:"resultType"`
			RequestState  string `json:"requestState"`
			InputRequests map[string]struct {
				Method string `json:"method"`
			} `json:"inputRequests"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &r, json.RejectUnknownMembers(false)); err != nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("not an input_required result with a state: %s", line)
	}
	asked := map[string]string{}
	for name, q := range r.Result.InputRequests {
		asked[name] = q.Method
	}
	return asked, r.Result.RequestState
}

const allCaps = `{"elicitation":{"form":{}},"sampling":{},"roots":{}}`

// round sends line and returns what the server wrote once it has had
// time to gather questions asked together.
func (s *testSession) round(line string) []string {
	s.t.Helper()
	s.send(line)
	time.Sleep(time.Second)
	return s.step()
}

// In 2026-07-28 a provider's questions are an input_required result, its
// work parked meanwhile: each retry with the answers and the state takes
// it over, and gets the next questions (several rounds) or the result.
func TestAProviderAsksItsClientInTheResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started atomic.Int32
		ft := askingProvider()
		inner := ft.calls["t_ask"]
		ft.calls["t_ask"] = func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
			started.Add(1)
			return inner(ctx, call, req)
		}
		s := startSession(t, t.Context(), newTestServer(ft), ModernVersion)
		out := s.round(modernCallWith("1", "t_ask", allCaps, ""))
		rounds := []struct{ name, method, answer string }{
			{"user_name", "elicitation/create", answerName},
			{"capital", "sampling/createMessage", answerModel},
			{"roots", "roots/list", answerRoots},
		}
		var states []string
		for i, r := range rounds {
			asked, state := inputRound(t, out[0])
			if diff := cmp.Diff(map[string]string{r.name: r.method}, asked); diff != "" {
				t.Fatalf("round %d asked (-want +got):\n%s", i+1, diff)
			}
			states = append(states, state)
			out = s.round(modernCallWith(fmt.Sprint(i+2), "t_ask", allCaps, `,"inputResponses":{"`+r.name+`":`+r.answer+`},"requestState":"`+state+`"`))
		}
		want := answerName + " | " + answerModel + " | " + answerRoots
		if len(out) != 1 || !strings.Contains(out[0], `"resultType":"complete"`) || !strings.Contains(out[0], fmt.Sprintf("%q", want)) {
			t.Errorf("the last round: %q", out)
		}
		if started.Load() != 1 {
			t.Errorf("the provider started %d times, want once: its call was parked", started.Load())
		}
		if states[0] == states[1] || states[1] == states[2] {
			t.Error("a round's state was used again")
		}
		// A state answered already is refused.
		if out := s.round(modernCallWith("9", "t_ask", allCaps, `,"inputResponses":{"user_name":`+answerName+`},"requestState":"`+states[0]+`"`)); !strings.Contains(out[0], `"code":-32602`) {
			t.Errorf("a spent state: %q", out)
		}
		s.close()
	})
}

// Questions asked together are asked in one result; a retry that answers
// some is asked the rest again.
func TestQuestionsAskedTogetherAreOneRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startSession(t, t.Context(), newTestServer(askingProvider()), ModernVersion)
		asked, state := inputRound(t, s.round(modernCallWith("1", "t_three", allCaps, ""))[0])
		want := map[string]string{"user_name": "elicitation/create", "greeting": "sampling/createMessage", "client_roots": "roots/list"}
		if diff := cmp.Diff(want, asked); diff != "" {
			t.Fatalf("asked (-want +got):\n%s", diff)
		}
		out := s.round(modernCallWith("2", "t_three", allCaps, `,"inputResponses":{"user_name":`+answerName+`,"extra":{"x":1}},"requestState":"`+state+`"`))
		asked, state = inputRound(t, out[0])
		if diff := cmp.Diff(map[string]string{"greeting": "sampling/createMessage", "client_roots": "roots/list"}, asked); diff != "" {
			t.Fatalf("asked again (-want +got):\n%s", diff)
		}
		out = s.round(modernCallWith("3", "t_three", allCaps, `,"inputResponses":{"greeting":`+answerModel+`,"client_roots":`+answerRoots+`},"requestState":"`+state+`"`))
		if len(out) != 1 || !strings.Contains(out[0], `"resultType":"complete"`) || !strings.Contains(out[0], "Paris") {
			t.Errorf("the last round: %q", out)
		}
		s.close()
	})
}

// A request that carries the answers by name, without a state (a client
// retrying afresh, or another process), is answered from them; answers
// that are not objects are refused; a state is bound to who got it.
func TestAnswersByNameAndTheirChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startSession(t, t.Context(), newTestServer(askingProvider()), ModernVersion)
		out := s.round(modernCallWith("1", "t_three", allCaps, `,"inputResponses":{"user_name":`+answerName+`,"greeting":`+answerModel+`,"client_roots":`+answerRoots+`,"unknown":{"a":1}}`))
		if len(out) != 1 || !strings.Contains(out[0], `"resultType":"complete"`) {
			t.Errorf("answered by name: %q", out)
		}
		for _, bad := range []string{`,"inputResponses":{"user_name":12345}`, `,"inputResponses":null`, `,"inputResponses":[]`} {
			if out := s.round(modernCallWith("2", "t_three", allCaps, bad)); len(out) != 1 || !strings.Contains(out[0], `"code":-32602`) {
				t.Errorf("%s: %q, want -32602", bad, out)
			}
		}
		out = s.round(modernCallWith("3", "t_three", allCaps, `,"inputResponses":{"user_name":{"action":"maybe"},"greeting":`+answerModel+`,"client_roots":`+answerRoots+`}`))
		if asked, _ := inputRound(t, out[0]); len(asked) != 1 || asked["user_name"] == "" {
			t.Errorf("an answer of the wrong shape: asked %v, want user_name asked again", asked)
		}
		s.close()
	})
	// Bound to the principal: another's state is refused.
	st := newInputStates(time.Minute)
	key := stateKey{"tools/call", "t", jsontext.Value(`{}`)}
	state, _ := st.issue(key, Principal{Kind: PrincipalToken, ID: "a"}, "", false)
	if _, err := st.verify(state, key, Principal{Kind: PrincipalToken, ID: "b"}); err != errStateOtherUse {
		t.Errorf("another principal's state: %v, want refused", err)
	}
	if _, err := st.verify(state, key, Principal{Kind: PrincipalToken, ID: "a"}); err != nil {
		t.Errorf("its own principal's state: %v", err)
	}
}

// Progress a provider reports reaches the client only above the last
// value sent, stops the heartbeats, and is coalesced while unread; its
// log messages follow the client's level.
func TestAProvidersProgressAndLogMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTools{set: NewToolSet([]Tool{{Name: "t_work"}}), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
			"t_work": func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
				time.Sleep(12 * time.Second) // two heartbeats
				for _, v := range []float64{1, 5, 2, 5, 6} {
					call.Progress(v, 10, fmt.Sprintf("step %v", v))
					synctest.Wait()
				}
				time.Sleep(12 * time.Second) // no heartbeat any more
				call.Log(LevelDebug, "work", "detail")
				call.Log(LevelWarning, "work", map[string]int{"left": 0})
				// 1 (after the heartbeats' 2), 2 and 5 again are not sent; a log
				// message below the level asked for is not a drop.
				if n := call.NotificationsDropped(); n != 3 {
					t.Errorf("NotificationsDropped = %d, want 3", n)
				}
				return TextResult("done", false), nil
			},
		}}
		s := startSession(t, t.Context(), newTestServer(ft), Version20251125)
		s.exchange(initLine(1, Version20251125))
		s.exchange(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
		s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_work","_meta":{"progressToken":"p"}}}`)
		time.Sleep(30 * time.Second)
		var got []string
		for _, l := range s.step() {
			var m struct {
				Method string `json:"method"`
				Params struct {
					Progress float64        `json:"progress"`
					Total    float64        `json:"total"`
					Data     jsontext.Value `json:"data"`
				} `json:"params"`
			}
			json.Unmarshal([]byte(l), &m, json.RejectUnknownMembers(false))
			switch m.Method {
			case "notifications/progress":
				got = append(got, fmt.Sprintf("progress %v/%v", m.Params.Progress, m.Params.Total))
			case "notifications/message":
				got = append(got, "log "+string(m.Params.Data))
			default:
				got = append(got, "response")
			}
		}
		want := []string{"progress 1/0", "progress 2/0", "progress 5/10", "progress 6/10", `log {"left":0}`, "response"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("what the client got (-want +got):\n%s", diff)
		}
		s.close()
	})
}

// At most MaxPendingAsks calls wait for answers at once: past it, a
// provider's question is refused at once.
func TestTooManyCallsWaitingForAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(askingProvider())
		srv.MaxPendingAsks = 1
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`)
		first := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_ask"}}`)
		second := s.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_three"}}`)
		if len(first) != 1 || len(second) != 1 || !strings.Contains(second[0], "error -32001") || strings.Count(second[0], "error -32001") != 3 {
			t.Errorf("first %q\nsecond %q\nwant the second's questions refused at once", first, second)
		}
		s.close()
	})
}

// No progress notification follows its call's response, however the
// provider's reports and the writer interleave: many calls report
// progress as fast as they can to a slow client, and end at once.
func TestNoProgressFollowsTheResponse(t *testing.T) {
	const calls, reports = 32, 200
	ft := &fakeTools{set: NewToolSet([]Tool{{Name: "t_flood"}}), calls: map[string]func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error){
		"t_flood": func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
			for i := range reports {
				call.Progress(float64(i+1), reports, "")
				runtime.Gosched()
			}
			return TextResult("done", false), nil
		},
	}}
	srv := newTestServer(ft)
	srv.MaxInFlight = calls
	slow := func(w io.Writer) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			time.Sleep(20 * time.Microsecond) // a client that reads a little slower than the calls report
			return w.Write(p)
		})
	}
	s := startSessionTo(t, t.Context(), srv, Version20251125, slow)
	s.send(initLine(0, Version20251125))
	token := strings.Repeat("t", 4<<10) // each notification a few KiB: the writer flushes often
	for i := 1; i <= calls; i++ {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_flood","_meta":{"progressToken":"%s%d"}}}`, i, token, i))
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		n := 0
		for _, l := range s.lines {
			if strings.Contains(l, `"result"`) {
				n++
			}
		}
		s.mu.Unlock()
		if n == calls+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d responses after 30 s", n, calls+1)
		}
	}
	got, err := s.close()
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	answered := map[string]bool{}
	last := map[string]float64{} // the last progress of each call
	for _, l := range got {
		var m struct {
			ID     jsontext.Value `json:"id"`
			Params struct {
				ProgressToken string  `json:"progressToken"`
				Progress      float64 `json:"progress"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(l), &m, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("%v: %.200s", err, l)
		}
		if m.ID != nil {
			id := string(m.ID)
			answered[id] = true
			if id != "0" && last[id] != reports {
				t.Errorf("call %s: the last progress before its response %v, want %d", id, last[id], reports)
			}
			continue
		}
		id := strings.TrimPrefix(m.Params.ProgressToken, token)
		if answered[id] {
			t.Fatalf("progress for call %s after its response", id)
		}
		last[id] = m.Params.Progress
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
