package registry

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// recorder keeps the entries recorded.
type recorder struct {
	mu      sync.Mutex
	entries []audit.Entry
}

func (r *recorder) Record(e *audit.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, *e)
}

func (r *recorder) take() []audit.Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	es := r.entries
	r.entries = nil
	return es
}

const accountsManifest = `{"id":"acct","tools":[
 {"name":"acct.login","description":"Log in.","inputSchema":{"type":"object","properties":{"user":{"type":"string"},"pin":{"type":"string","format":"password"},"note":{"type":"string"}},"required":["user"]}},
 {"name":"acct.delete","description":"Delete the account.","inputSchema":{"type":"object"}}
],"implementation":{"methods":{"acct.login":"accounts.login","acct.delete":"accounts.delete"}}}`

// accountsBackend answers accounts.login by the user: "denied" is refused
// with -32011, "down" finds the backend unavailable.
func accountsBackend() *fakeBackend {
	return &fakeBackend{fn: func(_ context.Context, _ string, params jsontext.Value) (jsontext.Value, error) {
		var p struct {
			User string `json:"user"`
		}
		_ = json.Unmarshal(params, &p)
		switch p.User {
		case "denied":
			return nil, &socketclient.RPCError{Code: -32011, Message: "Permission denied"}
		case "down":
			return nil, fmt.Errorf("%w: dial: no such file", socketclient.ErrUnavailable)
		}
		return jsontext.Value(`{"ok":true}`), nil
	}}
}

func auditedRegistry(t *testing.T, values bool) (*Registry, *recorder) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "acct.json"), accountsManifest)
	rec := &recorder{}
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: accountsBackend(), CallTimeout: time.Minute,
		Filter: Filter{Exclude: []string{"acct.delete"}}, Limits: manifest.Limits{Size: 200},
		Audit: rec, AuditValues: values})
	return r, rec
}

// client is the request's side of every entry these tests expect.
func client(e audit.Entry) audit.Entry {
	e.Transport, e.Session, e.Client, e.ClientVersion, e.ProtocolVersion = "stdio", "5e55", "Claude Desktop", "0.9.2", protocol.Version20251125
	e.Principal = "process"
	e.Kind = audit.KindTool
	return e
}

func request(name, args string) *protocol.CallToolRequest {
	return &protocol.CallToolRequest{Name: name, Arguments: jsontext.Value(args)}
}

// who is the Call of the requests of the entries client expects, in
// version, asking the user with ask.
func who(version string, ask protocol.Asker) *protocol.Call {
	return protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: "Claude Desktop", Version: "0.9.2"},
		SessionID: "5e55", Transport: "stdio", ProtocolVersion: version, Ask: ask})
}

// Every call is recorded once, with its outcome: ok, invalid arguments, a
// backend error and its code, an unavailable backend, an unknown tool, a
// tool a filter keeps out, arguments past a limit.
func TestEveryCallIsRecordedWithItsOutcome(t *testing.T) {
	r, rec := auditedRegistry(t, false)
	login := func(e audit.Entry) audit.Entry {
		e.Name, e.ManifestName, e.Method = "t_acct_login", "acct.login", "accounts.login"
		return client(e)
	}
	big := `{"user":"` + strings.Repeat("a", 300) + `"}`
	for _, tc := range []struct {
		name, tool, args string
		want             audit.Entry
	}{
		{"ok", "t_acct_login", `{"user":"ann","pin":"1234"}`,
			login(audit.Entry{Outcome: "ok", BytesIn: 27, BytesOut: 11, ArgKeys: []string{"user", "pin"}})},
		{"invalid arguments", "t_acct_login", `{"pin":"1234"}`,
			login(audit.Entry{Outcome: "invalid_arguments", BytesIn: 14, ArgKeys: []string{"pin"}})},
		{"a backend error and its code", "t_acct_login", `{"user":"denied"}`,
			login(audit.Entry{Outcome: "backend_error", Code: new(int64(-32011)), BytesIn: 17, ArgKeys: []string{"user"}})},
		{"an unavailable backend", "t_acct_login", `{"user":"down"}`,
			login(audit.Entry{Outcome: "unavailable", BytesIn: 15, ArgKeys: []string{"user"}})},
		{"no arguments", "t_acct_login", ``,
			login(audit.Entry{Outcome: "invalid_arguments"})},
		{"arguments past a limit", "t_acct_login", big,
			login(audit.Entry{Outcome: "refused", BytesIn: len(big), ArgKeys: []string{"user"}})},
		{"a tool a filter keeps out", "t_acct_delete", `{}`,
			client(audit.Entry{Name: "t_acct_delete", Outcome: "refused", BytesIn: 2})},
		{"an unknown tool", "t_nope", `{"x":1}`,
			client(audit.Entry{Name: "t_nope", Outcome: "unknown_tool", BytesIn: 7, ArgKeys: []string{"x"}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now().UTC().Add(-time.Millisecond)
			res, err := r.CallTool(t.Context(), who(protocol.Version20251125, nil), request(tc.tool, tc.args))
			es := rec.take()
			if len(es) != 1 {
				t.Fatalf("%d entries recorded, want 1", len(es))
			}
			got := es[0]
			if (err != nil) != (res == nil) || got.Outcome != "ok" && err == nil && !res.IsError {
				t.Errorf("result %+v, error %v for outcome %s", res, err, got.Outcome)
			}
			if tm, err := time.Parse(time.RFC3339, got.Time); err != nil || tm.Before(start.Truncate(time.Millisecond)) || got.Duration < 0 {
				t.Errorf("time %q (%v), duration %v ms", got.Time, err, got.Duration)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(audit.Entry{}, "Time", "Duration", "BytesOut")); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
			if res != nil && got.BytesOut != contentSize(res) || tc.want.BytesOut != 0 && got.BytesOut != tc.want.BytesOut {
				t.Errorf("bytes out %d, result of %d", got.BytesOut, contentSize(res))
			}
		})
	}
}

func TestValuesAreRecordedOnlyWhenAskedRedacted(t *testing.T) {
	args := `{"user":"ann","pin":"1234","note":"call back","api_token":"t0k"}`
	r, rec := auditedRegistry(t, false)
	call(t, r, "t_acct_login", args)
	if es := rec.take(); len(es) != 1 || es[0].Args != nil || strings.Contains(fmt.Sprint(es[0]), "ann") {
		t.Errorf("without values: %+v", es)
	}
	r, rec = auditedRegistry(t, true)
	call(t, r, "t_acct_login", args)
	es := rec.take()
	want := `{"user":"ann","pin":"[redacted]","note":"call back","api_token":"[redacted]"}`
	if len(es) != 1 || string(es[0].Args) != want || es[0].ArgsCut {
		t.Errorf("with values: %+v, want args %s", es, want)
	}
}

// Search mode records find_tools as itself, and call_tool as the tool it
// ran: the name, manifest name and method of that tool.
func TestSearchModeRecordsTheToolActuallyCalled(t *testing.T) {
	r, rec := auditedRegistry(t, false)
	s := NewSearch(r)
	find := func(e audit.Entry) audit.Entry {
		e.Name, e.ManifestName = "t_find_tools", "find_tools"
		return client(e)
	}
	for _, tc := range []struct {
		name, tool, args string
		want             audit.Entry
	}{
		{"find_tools", "t_find_tools", `{"query":"log in"}`,
			find(audit.Entry{Outcome: "ok", BytesIn: 18, ArgKeys: []string{"query"}, Found: []string{"t_acct_login"}})},
		{"find_tools with invalid arguments", "t_find_tools", `{}`,
			find(audit.Entry{Outcome: "invalid_arguments", BytesIn: 2})},
		{"call_tool runs login", "t_call_tool", `{"name":"t_acct_login","arguments":{"user":"denied"}}`,
			client(audit.Entry{Name: "t_acct_login", ManifestName: "acct.login", Method: "accounts.login",
				Outcome: "backend_error", Code: new(int64(-32011)), BytesIn: 17, ArgKeys: []string{"user"}})},
		{"call_tool of an unknown tool", "t_call_tool", `{"name":"t_nope","arguments":{}}`,
			client(audit.Entry{Name: "t_nope", Outcome: "unknown_tool", BytesIn: 2})},
		{"call_tool of a tool a filter keeps out", "t_call_tool", `{"name":"t_acct_delete"}`,
			client(audit.Entry{Name: "t_acct_delete", Outcome: "refused"})},
		{"call_tool without a name", "t_call_tool", `{"arguments":{}}`,
			client(audit.Entry{Name: "t_call_tool", ManifestName: "call_tool", Outcome: "invalid_arguments", BytesIn: 16, ArgKeys: []string{"arguments"}})},
		{"a tool search mode does not list", "t_acct_login", `{}`,
			client(audit.Entry{Name: "t_acct_login", Outcome: "unknown_tool", BytesIn: 2})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _ = s.CallTool(t.Context(), who(protocol.Version20251125, nil), request(tc.tool, tc.args))
			es := rec.take()
			if len(es) != 1 {
				t.Fatalf("%d entries recorded, want 1: %+v", len(es), es)
			}
			if diff := cmp.Diff(tc.want, es[0], cmpopts.IgnoreFields(audit.Entry{}, "Time", "Duration", "BytesOut")); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
		})
	}
}

// A call that asks the user records how it asked and the answer: a yes
// runs the tool, anything else is declined; in 2026-07-28 the question
// goes out in the result and is recorded as asked.
func TestConfirmationsAreRecorded(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "acct.json"), strings.Replace(accountsManifest, `"description":"Delete the account.",`, `"description":"Delete the account.","annotations":{"destructiveHint":true},`, 1))
	rec := &recorder{}
	r := New(Options{Dirs: []string{dir}, Prefix: "t", Backend: accountsBackend(), CallTimeout: time.Minute, Audit: rec})
	ask := func(a protocol.Answer, err error) protocol.Asker {
		return func(context.Context, protocol.Question) (protocol.Answer, error) { return a, err }
	}
	tests := []struct {
		name               string
		version            string
		ask                protocol.Asker
		how, answer, outcm string
		wantErr            error
	}{
		{"a yes", protocol.Version20251125, ask(protocol.Answer{Action: "accept", Allowed: true}, nil), "elicitation", "accept", "ok", nil},
		{"a no", protocol.Version20251125, ask(protocol.Answer{Action: "accept"}, nil), "elicitation", "no", "declined", nil},
		{"a decline", protocol.Version20251125, ask(protocol.Answer{Action: "decline"}, nil), "elicitation", "decline", "declined", nil},
		{"asked in the result", protocol.Version20260728, ask(protocol.Answer{}, protocol.ErrInputRequired), "input_required", "", "input_required", protocol.ErrInputRequired},
		{"a client that cannot ask", protocol.Version20251125, nil, "", "", "ok", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request("t_acct_delete", `{}`)
			if _, err := r.CallTool(t.Context(), who(tt.version, tt.ask), req); !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			es := rec.take()
			if len(es) != 1 || es[0].Confirmation != tt.how || es[0].Answer != tt.answer || es[0].Outcome != tt.outcm {
				t.Errorf("recorded %+v; want asked by %q, answer %q, outcome %q", es, tt.how, tt.answer, tt.outcm)
			}
		})
	}
}
