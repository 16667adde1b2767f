package socketclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// talker is a Call that records what the backend says during a call and
// answers its requests with answer.
type talker struct {
	counting
	answer func(ctx context.Context, id jsontext.Value, method string, params jsontext.Value) (jsontext.Value, error)

	mu   sync.Mutex
	said []string
}

func (c *talker) Notify(method string, params jsontext.Value) {
	c.mu.Lock()
	c.said = append(c.said, method+" "+string(params))
	c.mu.Unlock()
}

func (c *talker) Request(ctx context.Context, id jsontext.Value, method string, params jsontext.Value) (jsontext.Value, error) {
	c.mu.Lock()
	c.said = append(c.said, "? "+string(id)+" "+method+" "+string(params))
	c.mu.Unlock()
	return c.answer(ctx, id, method, params)
}

func (c *talker) heard() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.said...)
}

// The backend speaks before it answers: its notifications reach the call
// in order, its requests are answered on the same connection, and the
// connection carries the next call as before.
func TestTheBackendSpeaksDuringACall(t *testing.T) {
	srv := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		if req.Method == "echo" {
			return sockettest.Echo(ctx, req)
		}
		p := req.Peer
		p.Notify("notifications/progress", map[string]any{"progress": 1, "total": 2})
		p.Notify("notifications/message", map[string]any{"level": "info", "data": "half way"})
		name, err := p.Call(ctx, "user_name", "elicitation/create", map[string]any{"message": "Name?"})
		if err != nil {
			return nil, err
		}
		var rpcErr *sockettest.Error
		_, err = p.Call(ctx, nil, "sampling/createMessage", map[string]any{"maxTokens": 5})
		if !errors.As(err, &rpcErr) {
			return nil, fmt.Errorf("sampling: %v", err)
		}
		return map[string]any{"name": name, "sampling": rpcErr.Code}, nil
	})
	c := newClient(t, srv.Path, &Options{PoolSize: 1})
	call := &talker{answer: func(_ context.Context, _ jsontext.Value, method string, _ jsontext.Value) (jsontext.Value, error) {
		if method == "sampling/createMessage" {
			return nil, &RPCError{Code: -32021, Message: "the client did not declare sampling", Data: jsontext.Value(`{"requiredCapabilities":{"sampling":{}}}`)}
		}
		return jsontext.Value(`{"action":"accept","content":{"name":"Ann"}}`), nil
	}}
	res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, call)
	if err != nil || string(res) != `{"name":{"action":"accept","content":{"name":"Ann"}},"sampling":-32021}` {
		t.Fatalf("Call = %s, %v", res, err)
	}
	want := []string{
		`notifications/progress {"progress":1,"total":2}`,
		`notifications/message {"data":"half way","level":"info"}`,
		`? "user_name" elicitation/create {"message":"Name?"}`,
		`? 1 sampling/createMessage {"maxTokens":5}`,
	}
	if diff := cmp.Diff(want, call.heard()); diff != "" {
		t.Errorf("what the call heard (-want +got):\n%s", diff)
	}
	if call.grown < len(res) || call.grown > len(res)+64 {
		t.Errorf("%d bytes still counted, want only the reply's (%d bytes of result)", call.grown, len(res))
	}
	echo(t, c, `{"next":true}`) // the same connection, in a good state
	if srv.Accepted() != 1 {
		t.Errorf("%d connections, want the one", srv.Accepted())
	}
}

// A backend that sends a request and then its reply without waiting gets
// its reply taken: the question is withdrawn, and its answer never
// written on the connection, which serves the next call cleanly.
func TestARequestThenTheReplyWithdrawsTheQuestion(t *testing.T) {
	srv := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		if req.Method == "echo" {
			return sockettest.Echo(ctx, req)
		}
		req.Peer.Send(`{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":{}}`)
		return "done", nil
	})
	c := newClient(t, srv.Path, &Options{PoolSize: 1})
	withdrawn := make(chan error, 1)
	call := &talker{answer: func(ctx context.Context, _ jsontext.Value, _ string, _ jsontext.Value) (jsontext.Value, error) {
		<-ctx.Done() // a person who never answers
		withdrawn <- ctx.Err()
		return jsontext.Value(`{"late":true}`), nil
	}}
	res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, call)
	if err != nil || string(res) != `"done"` {
		t.Fatalf("Call = %s, %v", res, err)
	}
	select {
	case err := <-withdrawn:
		if err == nil {
			t.Error("the question was not withdrawn")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the question is still asked after the reply")
	}
	echo(t, c, `"after"`)
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Params), "late") {
			t.Errorf("the withdrawn answer reached the backend: %+v", r)
		}
	}
}

// A backend that asks a thousand questions at once gets at most
// MaxPendingRequests asked, and the rest answered -32001 at once; each
// question's bytes are counted while it is asked, and given back.
func TestABackendThatAsksAThousandQuestions(t *testing.T) {
	const asked = 1000
	srv := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		type answer struct {
			res jsontext.Value
			err error
		}
		answers := make(chan answer, asked)
		for i := range asked {
			go func() {
				res, err := req.Peer.Call(ctx, i+1, "roots/list", map[string]any{"pad": strings.Repeat("x", 100)})
				answers <- answer{res, err}
			}()
		}
		busy, ok := 0, 0
		for range asked {
			a := <-answers
			var e *sockettest.Error
			switch {
			case errors.As(a.err, &e) && e.Code == -32001:
				busy++
			case a.err == nil:
				ok++
			default:
				return nil, a.err
			}
		}
		return map[string]int{"busy": busy, "ok": ok}, nil
	})
	c := newClient(t, srv.Path, nil)
	release := make(chan struct{})
	var mu sync.Mutex
	waiting, most := 0, 0
	call := &talker{answer: func(ctx context.Context, _ jsontext.Value, _ string, _ jsontext.Value) (jsontext.Value, error) {
		mu.Lock()
		waiting++
		most = max(most, waiting)
		mu.Unlock()
		<-release
		mu.Lock()
		waiting--
		mu.Unlock()
		return jsontext.Value(`{"roots":[]}`), nil
	}}
	go func() { // lets the questions go once the backend has heard the refusals
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if n := len(call.heard()); n >= MaxPendingRequests {
				time.Sleep(100 * time.Millisecond)
				break
			}
		}
		close(release)
	}()
	res, err := c.Call(callCtx(t, 10*time.Second), "m", nil, call)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Busy, OK int }
	if err := json.Unmarshal(res, &got, json.MatchCaseInsensitiveNames(true)); err != nil || got.Busy+got.OK != asked || got.OK < MaxPendingRequests {
		t.Errorf("the backend saw %s (%v): want every question answered, at least %d of them", res, err, MaxPendingRequests)
	}
	if most > MaxPendingRequests {
		t.Errorf("%d questions asked at once, past %d", most, MaxPendingRequests)
	}
	if call.grown < len(res) || call.grown > len(res)+64 {
		t.Errorf("%d bytes still counted, want only the reply's (%d bytes of result)", call.grown, len(res))
	}
}

// Without a call to hand them to, the backend's requests are answered
// -32601 and its notifications dropped; the call goes on.
func TestNoCallAnswersTheBackendsRequests(t *testing.T) {
	srv := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		req.Peer.Notify("notifications/progress", map[string]any{"progress": 1})
		_, err := req.Peer.Call(ctx, "r", "roots/list", nil)
		var e *sockettest.Error
		if !errors.As(err, &e) {
			return nil, fmt.Errorf("roots/list: %v", err)
		}
		return e.Code, nil
	})
	c := newClient(t, srv.Path, nil)
	if res, err := c.Call(callCtx(t, 5*time.Second), "m", nil, nil); err != nil || string(res) != "-32601" {
		t.Errorf("Call = %s, %v; want the backend to have seen -32601", res, err)
	}
}
