package protocol

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// fakeOwner answers the owner's questions: away, it refuses them at
// once; else it answers each with answer, or waits for ctx when answer
// is empty.
type fakeOwner struct {
	away   bool
	answer string

	mu    sync.Mutex
	asked []OwnerQuestion
	calls []*Call
}

func (o *fakeOwner) Ask(ctx context.Context, call *Call, q OwnerQuestion) (jsontext.Value, error) {
	o.mu.Lock()
	o.asked = append(o.asked, q)
	o.calls = append(o.calls, call)
	o.mu.Unlock()
	switch {
	case o.away:
		return nil, fmt.Errorf("%w: open http://127.0.0.1:1/ui/ to answer", ErrOwnerAway)
	case o.answer == "":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return jsontext.Value(o.answer), nil
}

func (o *fakeOwner) questions() []OwnerQuestion {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]OwnerQuestion(nil), o.asked...)
}

// confirmingProvider has t_confirm, which asks the user to confirm and
// says what came back, and t_ask (askingProvider's): a form, a
// completion, the roots.
func confirmingProvider() *fakeTools {
	p := askingProvider()
	p.set = NewToolSet([]Tool{{Name: "t_ask"}, {Name: "t_confirm"}})
	p.calls["t_confirm"] = func(ctx context.Context, call *Call, _ *CallToolRequest) (*CallToolResult, error) {
		a, err := call.Confirm(ctx, Question{Message: "Delete the note n1?"})
		var e *Error
		switch {
		case errors.As(err, &e):
			return TextResult(fmt.Sprintf("error %d %s away=%v", e.Code, WireError(err).Message, errors.Is(err, ErrOwnerAway)), true), nil
		case err != nil:
			return TextResult("error "+err.Error(), true), nil
		}
		return TextResult(fmt.Sprintf("asks owner %v, action %s, allowed %v", call.AsksOwner(), a.Action, a.Allowed), false), nil
	}
	return p
}

func ownerServer(o Owner) *Server {
	srv := newTestServer(confirmingProvider())
	srv.Owner = o
	return srv
}

// A client without elicitation: the owner answers the bridge's
// confirmation and the provider's form, in both eras; the client's
// model and roots are still the client's, refused.
func TestTheOwnerAnswersWhatTheClientCannotAsk(t *testing.T) {
	for _, version := range []string{Version20251125, ModernVersion} {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := &fakeOwner{answer: `{"action":"accept","content":{"confirm":true,"name":"Ann"}}`}
				s := startSession(t, t.Context(), ownerServer(o), version)
				call := func(id, name string) string {
					if version == ModernVersion {
						return modernReq(id, "tools/call", `"name":"`+name+`"`)
					}
					return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `"}}`
				}
				if version != ModernVersion {
					s.exchange(initLine(1, version))
				}
				out := s.exchange(call("2", "t_confirm"))
				if len(out) != 1 || !strings.Contains(out[0], "asks owner true, action accept, allowed true") {
					t.Errorf("confirmation: %q", out)
				}
				out = s.exchange(call("3", "t_ask"))
				want := `{\"action\":\"accept\",\"content\":{\"confirm\":true,\"name\":\"Ann\"}} | error -32021 {\"requiredCapabilities\":{\"sampling\":{}}} | error -32021 {\"requiredCapabilities\":{\"roots\":{}}}`
				if len(out) != 1 || !strings.Contains(out[0], want) {
					t.Errorf("the provider's questions: %q, want %s", out, want)
				}
				qs := o.questions()
				if len(qs) != 2 || !qs[0].Confirm || qs[0].Message != "Delete the note n1?" || qs[1].Confirm || qs[1].Message != "Your name?" {
					t.Errorf("the owner was asked %+v", qs)
				}
				s.close()
			})
		})
	}
}

// With no one at the console the confirmation is refused at once, as
// the client's lack of elicitation, with the owner's words on where to
// answer.
func TestAnAbsentOwnerIsRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startSession(t, t.Context(), ownerServer(&fakeOwner{away: true}), Version20251125)
		s.exchange(initLine(1, Version20251125))
		out := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_confirm"}}`)
		if len(out) != 1 || !strings.Contains(out[0], "error -32021 no owner's console is open to answer: open http://127.0.0.1:1/ui/ to answer away=true") {
			t.Errorf("got %q", out)
		}
		s.close()
	})
}

// A client that can ask is asked, not the owner.
func TestAClientThatCanAskIsAskedNotTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &fakeOwner{answer: `{"action":"decline"}`}
		s := startSession(t, t.Context(), ownerServer(o), Version20251125)
		s.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
		out := s.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_confirm"}}`)
		if len(out) != 1 || !strings.Contains(out[0], "elicitation/create") {
			t.Fatalf("want the client asked, got %q", out)
		}
		id, _ := serverRequest(t, out[0])
		out = s.exchange(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{"confirm":true}}}`)
		if len(out) != 1 || !strings.Contains(out[0], "allowed true") || len(o.questions()) != 0 {
			t.Errorf("got %q; the owner was asked %d questions", out, len(o.questions()))
		}
		s.close()
	})
}

// While the owner is asked, the call's heartbeats say so, and no more
// than AskTimeout is spent waiting.
func TestTheOwnerIsWaitedForWithHeartbeatsUpToTheAskTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := ownerServer(&fakeOwner{})
		srv.AskTimeout = 12 * time.Second
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(initLine(1, Version20251125))
		s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_confirm","_meta":{"progressToken":"p"}}}`)
		time.Sleep(6 * time.Second)
		out := s.step()
		if len(out) != 1 || !strings.Contains(out[0], `"message":"waiting for the owner's answer on the console (5s)"`) {
			t.Errorf("after 6s: %q, want a heartbeat saying the owner is asked", out)
		}
		time.Sleep(7 * time.Second)
		out = s.step()
		if len(out) == 0 || !strings.Contains(out[len(out)-1], "error -32001 timed out: the owner did not answer elicitation/create within 12s") {
			t.Errorf("after the ask timeout: %q", out)
		}
		s.close()
	})
}

// Stats count the sessions open, their calls in flight and the bytes
// they hold.
func TestStatsCountSessionsAndCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := ownerServer(&fakeOwner{})
		s := startSession(t, t.Context(), srv, Version20251125)
		s.exchange(initLine(1, Version20251125))
		s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_confirm"}}`)
		s.step()
		st := srv.Stats()
		if len(st.Sessions) != 1 || st.InFlight != 1 || st.Sessions[0].Client.Name != "test" || st.Sessions[0].ProtocolVersion != Version20251125 ||
			st.Sessions[0].Principal.Kind != PrincipalProcess || st.HeldBytes <= 0 || st.HeldLimit != DefaultMaxHeldBytes {
			t.Errorf("stats %+v", st)
		}
		s.close()
		if st := srv.Stats(); len(st.Sessions) != 0 || st.InFlight != 0 {
			t.Errorf("after the session: %+v", st)
		}
	})
}
