package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// askMethods adds methods that ask in the ways a backend may: several
// questions before any answer, waited for in order or at once, and a
// question nobody waits for.
func askMethods(s *server) {
	// test.ask3 asks a, b and c, then waits for each in turn.
	s.d.methods["test.ask3"] = func(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
		var qs []*question
		for _, id := range []string{"a", "b", "c"} {
			q, err := p.ask(id, "roots/list", map[string]any{})
			if err != nil {
				return nil, err
			}
			qs = append(qs, q)
		}
		var out []string
		for _, q := range qs {
			res, err := q.wait(ctx)
			if err != nil {
				return nil, err
			}
			out = append(out, string(res))
		}
		return out, nil
	}
	// test.together asks a, b and c from a goroutine each, at once.
	s.d.methods["test.together"] = func(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
		var wg sync.WaitGroup
		out := make([]string, 3)
		errs := make([]error, 3)
		for i, id := range []string{"a", "b", "c"} {
			wg.Go(func() {
				res, err := p.call(ctx, id, "roots/list", map[string]any{})
				out[i], errs[i] = string(res), err
			})
		}
		wg.Wait()
		return out, errors.Join(errs...)
	}
	// test.twice asks a while a waits already.
	s.d.methods["test.twice"] = func(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
		if _, err := p.ask("a", "roots/list", nil); err != nil {
			return nil, err
		}
		_, err := p.ask("a", "roots/list", nil)
		return nil, &rpcError{Code: codeInternalError, Message: err.Error()}
	}
	// test.nowait asks and replies without waiting for the answer.
	s.d.methods["test.nowait"] = func(ctx context.Context, params json.RawMessage, p *peer) (any, error) {
		_, err := p.ask("ignored", "roots/list", map[string]any{})
		return map[string]bool{"asked": err == nil}, nil
	}
}

// rootsOf is an answer that names its question.
func rootsOf(q message) map[string]any {
	return map[string]any{"roots": []any{map[string]string{"uri": "file:///" + strings.Trim(string(q.ID), `"`)}}}
}

func TestQuestionsAreAnsweredInAnyOrder(t *testing.T) {
	ts := startServer(t, serverConfig{tweak: askMethods})
	for _, method := range []string{"test.ask3", "test.together"} {
		t.Run(method, func(t *testing.T) {
			c := ts.dial(t)
			id := c.request(method, nil)
			// Every question is asked before any answer.
			var qs []message
			for range 3 {
				qs = append(qs, c.next())
			}
			for i := len(qs) - 1; i >= 0; i-- {
				c.answer(qs[i], rootsOf(qs[i]), nil)
			}
			m := c.next()
			want := `["{\"roots\":[{\"uri\":\"file:///a\"}]}","{\"roots\":[{\"uri\":\"file:///b\"}]}","{\"roots\":[{\"uri\":\"file:///c\"}]}"]`
			if string(m.ID) != fmt.Sprint(id) || m.Error != nil || string(m.Result) != want {
				t.Errorf("reply %s %+v %s, want %s", m.ID, m.Error, m.Result, want)
			}
			var ids []string
			for _, q := range qs {
				ids = append(ids, string(q.ID))
			}
			if strings.Join(ids, ",") != `"a","b","c"` && method == "test.ask3" {
				t.Errorf("asked %v", ids)
			}
		})
	}
	t.Run("an id asked while it waits is refused", func(t *testing.T) {
		x := ts.dial(t).exchange("test.twice", nil, func(q message) (any, *rpcError) { return rootsOf(q), nil })
		if x.reply.Error == nil || x.reply.Error.Message != `a request "a" is waiting for its answer already` {
			t.Errorf("reply %+v", x.reply)
		}
	})
}

// The bridge sends nothing but answers during a call; a client that
// sends its next request early has it served after the call, in order.
func TestARequestSentDuringACallIsServedAfterIt(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	n := result[note](t, c, "notes.create", map[string]any{"title": "Groceries"})
	label := c.request("notes.label", map[string]any{"id": n.ID})
	q := c.next()
	c.send(`{"jsonrpc":"2.0","id":"early","method":"notes.get","params":{"id":"` + n.ID + `"}}`)
	c.answer(q, accepted(map[string]any{"label": "shopping"}), nil)
	if m := c.next(); string(m.ID) != fmt.Sprint(label) || m.Error != nil {
		t.Fatalf("first reply %s %+v, want notes.label's", m.ID, m.Error)
	}
	if m := c.next(); string(m.ID) != `"early"` || !strings.Contains(string(m.Result), `"label":"shopping"`) {
		t.Errorf("second reply %s %s, want the early notes.get after the label", m.ID, m.Result)
	}
}

// An answer that comes after its call replied (the bridge withdraws the
// questions once the reply comes, but one may cross it) is dropped, and
// the connection serves on.
func TestAnAnswerAfterItsCallIsDropped(t *testing.T) {
	ts := startServer(t, serverConfig{tweak: askMethods})
	c := ts.dial(t)
	id := c.request("test.nowait", nil)
	q := c.next()
	if m := c.next(); string(m.ID) != fmt.Sprint(id) || string(m.Result) != `{"asked":true}` {
		t.Fatalf("reply %s %s", m.ID, m.Result)
	}
	c.answer(q, rootsOf(q), nil)
	c.send(`{"jsonrpc":"2.0","id":"e","error":{"code":-1,"message":"late"}}`)
	if r := result[map[string]bool](t, c, "backend.ping", nil); !r["ok"] {
		t.Errorf("ping %v", r)
	}
}

func TestAWaitEndsWithItsConnection(t *testing.T) {
	returned := make(chan error, 1)
	ts := startServer(t, serverConfig{tweak: returning("notes.label", returned)})
	c := ts.dial(t)
	n := result[note](t, c, "notes.create", map[string]any{"title": "Groceries"})
	c.request("notes.label", map[string]any{"id": n.ID})
	c.next()
	c.c.Close()
	var re *rpcError
	if err := waitReturned(t, returned); !errors.As(err, &re) || re.Code != codeCancelled ||
		re.Message != "cancelled: the connection closed before the client answered elicitation/create" {
		t.Errorf("the handler returned %v", err)
	}
}

func TestShutdownInterruptsAWait(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	c.request("files.roots", nil)
	c.next()
	ts.stop(t)
	if m := c.next(); m.Error == nil || m.Error.Code != codeShuttingDown || m.Error.Message != "interrupted: the backend is shutting down" {
		t.Errorf("reply %+v", m)
	}
}

// A request of a batch cannot speak: one that must ask says so, one
// that reports progress works without.
func TestABatchCannotAsk(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)
	result[note](t, c, "notes.create", map[string]any{"title": "travel"})
	c.send(`[{"jsonrpc":"2.0","id":1,"method":"notes.digest","params":{"topic":"travel"}},{"jsonrpc":"2.0","id":2,"method":"notes.import","params":{"count":1}}]`)
	line := c.recv()
	if !strings.HasPrefix(line, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"cannot summarize in a batch: send the request on its own, so that it can ask the client"}},{"jsonrpc":"2.0","id":2,"result":{"imported":1,`) {
		t.Errorf("batch reply %s", line)
	}
}
