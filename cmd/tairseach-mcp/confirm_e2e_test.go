//go:build unix

package main

// End-to-end tests of asking the user before a destructive call: the
// built binary, the Go SDK client with an elicitation handler, in every
// version that has elicitation, and a fake backend that counts what it
// was asked to do.

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// deleteManifest has a destructive tool with a question of its own, and
// one that says nothing but is annotated destructive.
const deleteManifest = `{"id":"notes","tools":[
 {"name":"notes.delete","title":"Delete a note","description":"Delete a note.",
  "inputSchema":{"type":"object","properties":{"id":{"type":"string"},"password":{"type":"string"}},"required":["id"]},
  "annotations":{"destructiveHint":true},"confirm":"Delete the note {id}?"},
 {"name":"notes.purge","description":"Delete every note.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
 {"name":"notes.read","description":"Read a note.","inputSchema":{"type":"object"}}
],"implementation":{"methods":{"notes.delete":"notes.delete","notes.purge":"notes.purge","notes.read":"notes.read"}}}`

// deletedIDs returns the ids the backend was asked to delete, in order.
func deletedIDs(be *sockettest.Server) []string {
	var ids []string
	for _, r := range be.Requests() {
		if r.Method == "notes.delete" {
			var p struct{ ID string }
			json.Unmarshal(r.Params, &p)
			ids = append(ids, p.ID)
		}
	}
	return ids
}

func deleteBackend(t *testing.T) *sockettest.Server {
	return sockettest.NewServer(t, func(_ context.Context, req sockettest.Request) (any, error) {
		return map[string]any{"done": req.Method}, nil
	})
}

// answering is an elicitation handler that answers each question with
// the action and content that answer returns for its message, and keeps
// the messages.
type answering struct {
	mu       sync.Mutex
	messages []string
	answer   func(ctx context.Context, message string) (*mcp.ElicitResult, error)
}

func (a *answering) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	a.messages = append(a.messages, req.Params.Message)
	a.mu.Unlock()
	return a.answer(ctx, req.Params.Message)
}

func (a *answering) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.messages)
}

func yesAnswer(context.Context, string) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
}

// elicitVersions are the versions in which the bridge asks: by a request
// of its own (2025-06-18, 2025-11-25), in the result (2026-07-28).
var elicitVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

func TestTheUserIsAskedBeforeADestructiveCall(t *testing.T) {
	answers := []struct {
		name     string
		answer   func(context.Context, string) (*mcp.ElicitResult, error)
		allowed  bool
		wantText string
	}{
		{"accept with yes", yesAnswer, true, `"done":"notes.delete"`},
		{"accept with no", func(context.Context, string) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, nil
		}, false, "did not allow tairseach_notes_delete (answered no)"},
		{"decline", func(context.Context, string) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}, false, "(declined)"},
		{"cancel", func(context.Context, string) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}, false, "(dismissed the question)"},
	}
	for _, version := range elicitVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			be := deleteBackend(t)
			dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
			for i, a := range answers {
				t.Run(a.name, func(t *testing.T) {
					h := &answering{answer: a.answer}
					cs := connectSDKWith(t, bridgeCmd(dir, be.Path), version, &mcp.ClientOptions{ElicitationHandler: h.handle})
					id := fmt.Sprintf("n%d", i)
					before := len(deletedIDs(be))
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_delete",
						Arguments: map[string]any{"id": id, "password": "hunter2"}})
					if err != nil {
						t.Fatal(err)
					}
					if res.IsError == a.allowed || !strings.Contains(textOf(res), a.wantText) {
						t.Errorf("isError %v, %q; want allowed %v, %q", res.IsError, textOf(res), a.allowed, a.wantText)
					}
					if asked := h.asked(); len(asked) != 1 || asked[0] != "Delete the note "+id+"?" {
						t.Errorf("asked %q, want the manifest's question once", asked)
					}
					if called := len(deletedIDs(be)) - before; called != map[bool]int{true: 1, false: 0}[a.allowed] {
						t.Errorf("the backend was called %d times", called)
					}
				})
			}
			t.Run("a tool without a question of its own names itself and its arguments, a line each, secrets masked", func(t *testing.T) {
				h := &answering{answer: yesAnswer}
				cs := connectSDKWith(t, bridgeCmd(dir, be.Path), version, &mcp.ClientOptions{ElicitationHandler: h.handle})
				if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_purge",
					Arguments: map[string]any{"folder": "inbox\nrm -rf", "api_key": "sk-123", "label": "\x1b[31mred\u202e"}}); err != nil {
					t.Fatal(err)
				}
				// The arguments come in the order the SDK encodes them, by name.
				want := "Allow notes.purge (tairseach_notes_purge) to run?\napi_key: ••••••\nfolder: inbox\\nrm -rf\nlabel: \\x1b[31mred\\u202e"
				if asked := h.asked(); len(asked) != 1 || asked[0] != want {
					t.Errorf("asked %q, want %q", asked, want)
				}
			})
			t.Run("a tool that is not destructive is not asked about", func(t *testing.T) {
				h := &answering{answer: yesAnswer}
				cs := connectSDKWith(t, bridgeCmd(dir, be.Path), version, &mcp.ClientOptions{ElicitationHandler: h.handle})
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_read", Arguments: map[string]any{}})
				if err != nil || res.IsError || len(h.asked()) != 0 {
					t.Errorf("%v %q, asked %q", err, textOf(res), h.asked())
				}
			})
		})
	}
}

// connectSDKWith connects the Go SDK client over stdio with opts.
func connectSDKWith(t *testing.T, cmd *exec.Cmd, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-confirm", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The user's time is not the call's: a yes that comes after longer than
// --call-timeout still lets the call run. The user who does not answer
// within --ask-timeout has not allowed it; a call cancelled while the
// user is asked withdraws the question.
func TestAQuestionNotAnsweredInTimeRefusesTheCall(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			be := deleteBackend(t)
			dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
			withdrawn := make(chan struct{}, 1)
			var asked atomic.Int32
			h := &answering{answer: func(ctx context.Context, _ string) (*mcp.ElicitResult, error) {
				if asked.Add(1) == 1 { // a slow yes
					select {
					case <-time.After(1500 * time.Millisecond):
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
					case <-ctx.Done():
					}
				}
				<-ctx.Done() // nobody answers
				withdrawn <- struct{}{}
				return nil, ctx.Err()
			}}
			cs := connectSDKWith(t, bridgeCmd(dir, be.Path, "--call-timeout", "1s", "--ask-timeout", "2s"), version, &mcp.ClientOptions{ElicitationHandler: h.handle})
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": "n0"}})
			if err != nil || res.IsError || !slices.Equal(deletedIDs(be), []string{"n0"}) {
				t.Fatalf("a yes after 1.5 s, past the 1 s call timeout: %v %q, deleted %v", err, textOf(res), deletedIDs(be))
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": "n1"}})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "did not answer in time") || !strings.Contains(textOf(res), "within 2s") {
				t.Fatalf("%v %q", err, textOf(res))
			}
			select {
			case <-withdrawn:
			case <-time.After(10 * time.Second):
				t.Error("the question was not withdrawn when its time was up")
			}
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": "n2"}})
				errc <- err
			}()
			for len(h.asked()) < 3 {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			<-errc
			select {
			case <-withdrawn:
			case <-time.After(10 * time.Second):
				t.Error("the question was not withdrawn when its call was cancelled")
			}
			if ids := deletedIDs(be); !slices.Equal(ids, []string{"n0"}) {
				t.Errorf("the backend deleted %v, want only the n0 allowed", ids)
			}
		})
	}
}

// Thirty-two confirmed calls at once, answered in the reverse order they
// were asked, each yes or no: the backend does exactly the ones allowed.
func TestManyQuestionsAnsweredOutOfOrder(t *testing.T) {
	for _, version := range elicitVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			const n = 32
			be := deleteBackend(t)
			dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
			var mu sync.Mutex
			waiting := map[string]chan struct{}{}
			all := make(chan struct{})
			h := &answering{answer: func(ctx context.Context, message string) (*mcp.ElicitResult, error) {
				id := strings.TrimSuffix(strings.TrimPrefix(message, "Delete the note "), "?")
				release := make(chan struct{})
				mu.Lock()
				waiting[id] = release
				if len(waiting) == n {
					close(all)
				}
				mu.Unlock()
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				var k int
				fmt.Sscanf(id, "n%d", &k)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": k%2 == 1}}, nil
			}}
			cs := connectSDKWith(t, bridgeCmd(dir, be.Path), version, &mcp.ClientOptions{ElicitationHandler: h.handle})
			var wg sync.WaitGroup
			results := make([]*mcp.CallToolResult, n)
			for k := range n {
				wg.Go(func() {
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": fmt.Sprintf("n%d", k)}})
					if err != nil {
						t.Error(err)
					}
					results[k] = res
				})
			}
			select {
			case <-all:
			case <-time.After(20 * time.Second):
				t.Fatalf("only %d of %d questions arrived", len(h.asked()), n)
			}
			for k := n - 1; k >= 0; k-- {
				mu.Lock()
				close(waiting[fmt.Sprintf("n%d", k)])
				mu.Unlock()
			}
			wg.Wait()
			var want []string
			for k := range n {
				if res := results[k]; res == nil || res.IsError != (k%2 == 0) {
					t.Errorf("call n%d: %v", k, res)
				}
				if k%2 == 1 {
					want = append(want, fmt.Sprintf("n%d", k))
				}
			}
			got := deletedIDs(be)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the backend deleted %v, want %v", got, want)
			}
		})
	}
}

// A client that cannot ask runs destructive tools unconfirmed by default,
// and is refused them with --confirm-unsupported deny.
func TestAClientThatCannotAsk(t *testing.T) {
	be := deleteBackend(t)
	dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
	for _, tt := range []struct {
		name    string
		args    []string
		allowed bool
	}{
		{"allow, the default", nil, true},
		{"deny", []string{"--confirm-unsupported", "deny"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := connectSDKWith(t, bridgeCmd(dir, be.Path, tt.args...), "2025-11-25", nil)
			before := len(deletedIDs(be))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": "n9"}})
			if err != nil || res.IsError == tt.allowed {
				t.Fatalf("%v %q", err, textOf(res))
			}
			if !tt.allowed && (!strings.Contains(textOf(res), "this client cannot ask") || !strings.Contains(textOf(res), "--confirm-unsupported allow")) {
				t.Errorf("the refusal does not say why, and how to change it: %q", textOf(res))
			}
			if got := len(deletedIDs(be)) - before; got != map[bool]int{true: 1}[tt.allowed] {
				t.Errorf("the backend was called %d times", got)
			}
		})
	}
}

// Over HTTP the question travels as it does on stdio: on the call's event
// stream (legacy), or in its result (2026-07-28), and the answer in a
// POST of its own or in the retry, which may come on another connection.
func TestTheUserIsAskedOverHTTP(t *testing.T) {
	be := deleteBackend(t)
	dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
	b := startHTTPBridge(t, dir, be.Path)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			for _, yes := range []bool{true, false} {
				h := &answering{answer: func(context.Context, string) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": yes}}, nil
				}}
				cs := connectHTTP(t, b.url, version, &mcp.ClientOptions{ElicitationHandler: h.handle})
				id := fmt.Sprintf("%s-%v", version, yes)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": id}})
				if err != nil || res.IsError == yes {
					t.Fatalf("answer %v: %v %q", yes, err, textOf(res))
				}
				if asked := h.asked(); len(asked) != 1 || asked[0] != "Delete the note "+id+"?" {
					t.Errorf("asked %q", asked)
				}
				if deleted := slices.Contains(deletedIDs(be), id); deleted != yes {
					t.Errorf("answer %v: deleted %v", yes, deleted)
				}
			}
		})
	}
}
