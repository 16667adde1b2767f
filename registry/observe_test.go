package registry

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// observer keeps what it is told.
type observer struct {
	mu      sync.Mutex
	started []string
	ended   []audit.Entry
}

func (o *observer) CallStarted(_ *protocol.Call, kind, name string, _ time.Time) {
	o.mu.Lock()
	o.started = append(o.started, kind+" "+name)
	o.mu.Unlock()
}

func (o *observer) CallEnded(_ *protocol.Call, e *audit.Entry) {
	o.mu.Lock()
	o.ended = append(o.ended, *e)
	o.mu.Unlock()
}

// The observer is told of each call's start and end, with its entry made
// safe, without an audit log.
func TestTheObserverIsToldOfEachCallWithoutAnAuditLog(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "acct.json"), accountsManifest)
	o := &observer{}
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: accountsBackend(), CallTimeout: time.Minute, Observe: o})
	call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: "evil\x1b[2J<img src=x>"}, Transport: "stdio"})
	if _, err := r.CallTool(t.Context(), call, request("t_acct_login", `{"user":"denied"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CallTool(t.Context(), call, request("t_nope", `{}`)); err == nil {
		t.Fatal("an unknown tool is an error")
	}
	if want := []string{"tool t_acct_login", "tool t_nope"}; fmt.Sprint(o.started) != fmt.Sprint(want) {
		t.Errorf("started %q, want %q", o.started, want)
	}
	if len(o.ended) != 2 || o.ended[0].Outcome != "backend_error" || *o.ended[0].Code != -32011 || o.ended[1].Outcome != "unknown_tool" ||
		o.ended[0].Client != "evil�[2J<img src=x>" || o.ended[0].Args != nil {
		t.Errorf("ended %+v", o.ended)
	}
}

// owner answers the owner's questions with answer, or is away.
type owner struct {
	answer string
	asked  int
}

func (o *owner) Ask(_ context.Context, _ *protocol.Call, q protocol.OwnerQuestion) (jsontext.Value, error) {
	o.asked++
	if o.answer == "" {
		return nil, fmt.Errorf("%w: the owner can answer at http://127.0.0.1:9/ui/", protocol.ErrOwnerAway)
	}
	return jsontext.Value(o.answer), nil
}

// A client without elicitation, on a server with an owner: the owner's
// answer decides, recorded as asked on the console; with no one there
// the call is refused at once, with where to answer.
func TestTheOwnerAnswersForAClientThatCannotAsk(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "acct.json"), strings.Replace(accountsManifest, `"description":"Delete the account.",`, `"description":"Delete the account.","annotations":{"destructiveHint":true},`, 1))
	for _, tt := range []struct {
		name, answer, outcome, recorded, says string
		ran                                   bool
	}{
		{"the owner allows", `{"action":"accept","content":{"confirm":true}}`, "ok", "accept", `{\"ok\":true}`, true},
		{"the owner denies", `{"action":"accept","content":{"confirm":false}}`, "declined", "no", "did not allow t_acct_delete (answered no)", false},
		{"no one is at the console", "", "refused", "none", "this client cannot ask (it declared no elicitation); no owner's console is open to answer: the owner can answer at http://127.0.0.1:9/ui/. So the call was refused", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec, be := &recorder{}, accountsBackend()
			r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: be, CallTimeout: time.Minute, Audit: rec})
			o := &owner{answer: tt.answer}
			srv := &protocol.Server{Tools: r, Owner: o}
			var out bytes.Buffer
			in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_acct_delete","arguments":{}}}` + "\n"
			if err := srv.Serve(t.Context(), strings.NewReader(in), &out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.says) {
				t.Errorf("answered %s, want %q", out.String(), tt.says)
			}
			es := rec.take()
			if o.asked != 1 || len(es) != 1 || es[0].Confirmation != "console" || es[0].Answer != tt.recorded || es[0].Outcome != tt.outcome {
				t.Errorf("asked %d; recorded %+v", o.asked, es)
			}
			if ran := len(be.recorded()) > 0; ran != tt.ran {
				t.Errorf("the backend was called: %v, want %v", ran, tt.ran)
			}
		})
	}
}
