//go:build unix

package main

// End-to-end tests of who may see a task over HTTP: the built binary,
// serving two named clients from a clients file, each with its own
// bearer token, in both protocol generations.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
)

// namedClient sends requests written by hand to an HTTP bridge as one
// named client, in one protocol generation, and checks every message of
// the bridge's replies against the schema of its version. It is safe for
// concurrent use, and reports failures as errors, so that goroutines
// other than the test's may use it.
type namedClient struct {
	url, token, version string
	session             string // 2025-11-25's Mcp-Session-Id, once initialized
	hc                  *http.Client
	checker             *protocoltest.Checker
	lastID              atomic.Int64
}

// rpcReply is a JSON-RPC response and how it came.
type rpcReply struct {
	status int
	header http.Header
	raw    []byte
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
		Data    json.RawMessage
	}
}

func (r *rpcReply) String() string {
	if r == nil {
		return "no response"
	}
	return fmt.Sprintf("%d %.400s", r.status, r.raw)
}

// connectNamed returns a client of the bridge at url with token: in
// 2025-11-25, once its session is initialized, declaring tasks.
func connectNamed(ctx context.Context, t *testing.T, url, token, version string) *namedClient {
	t.Helper()
	c := &namedClient{url: url, token: token, version: version, hc: &http.Client{}, checker: protocoltest.NewChecker(version)}
	if version != "2025-11-25" {
		return c
	}
	r, err := c.do(ctx, "initialize", "", `"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"e2e","version":"1"}`)
	if err != nil || r.Error != nil || r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %v %v", err, r)
	}
	c.session = r.header.Get("Mcp-Session-Id")
	status, _, _, err := c.post(ctx, "notifications/initialized", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil || status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %v", status, err)
	}
	return c
}

// do sends the request method with params (the members of its params
// object, without braces; in 2026-07-28 with the tasks extension
// declared) and name in Mcp-Name (2026-07-28), and returns its response.
func (c *namedClient) do(ctx context.Context, method, name, params string) (*rpcReply, error) {
	id := c.lastID.Add(1)
	if c.version == "2026-07-28" {
		params = strings.TrimPrefix(params+","+tasksMeta, ",")
	}
	status, header, msgs, err := c.post(ctx, method, name, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, id, method, params))
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		var env struct {
			ID     json.RawMessage
			Method string
		}
		if json.Unmarshal(m, &env) != nil || env.Method != "" || string(env.ID) != strconv.FormatInt(id, 10) {
			continue
		}
		r := &rpcReply{status: status, header: header, raw: m}
		if err := json.Unmarshal(m, r); err != nil {
			return nil, fmt.Errorf("%s: %w: %s", method, err, m)
		}
		return r, nil
	}
	return nil, fmt.Errorf("%s: %d and no response in %q", method, status, msgs)
}

// post sends body and returns the reply's status, headers and messages
// (one JSON object, or an event stream's), each checked.
func (c *namedClient) post(ctx context.Context, method, name, body string) (int, http.Header, [][]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + c.token}
	switch {
	case c.version == "2026-07-28":
		h["MCP-Protocol-Version"], h["Mcp-Method"], h["Mcp-Name"] = c.version, method, name
	case c.session != "":
		h["MCP-Protocol-Version"], h["Mcp-Session-Id"] = c.version, c.session
	}
	for k, v := range h {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	c.checker.ClientLine([]byte(body))
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s: reading the reply: %w", method, err)
	}
	var msgs [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if m, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok && len(bytes.TrimSpace(m)) > 0 {
				msgs = append(msgs, bytes.Clone(bytes.TrimSpace(m)))
			}
		}
	} else if len(data) > 0 {
		msgs = append(msgs, data)
	}
	for _, m := range msgs {
		if err := c.checker.ServerLine(m); err != nil {
			return 0, nil, nil, fmt.Errorf("%s: invalid message %.300s: %w", method, m, err)
		}
	}
	return resp.StatusCode, resp.Header, msgs, nil
}

// taskView is what this test reads of a task in a result: a 2025-11-25
// CreateTaskResult's task, or the task itself (a 2026-07-28
// CreateTaskResult, either generation's tasks/get), with what it holds.
type taskView struct {
	TaskID, Status, ResultType string
	Result                     json.RawMessage
}

func taskOf(r *rpcReply) taskView {
	var v struct {
		taskView
		Task *taskView
	}
	if r == nil || json.Unmarshal(r.Result, &v) != nil {
		return taskView{}
	}
	if v.Task != nil {
		return *v.Task
	}
	return v.taskView
}

// listed returns the ids of the tasks a tasks/list result lists.
func listed(r *rpcReply) []string {
	var v struct{ Tasks []struct{ TaskID string } }
	if r != nil {
		json.Unmarshal(r.Result, &v)
	}
	var ids []string
	for _, tk := range v.Tasks {
		ids = append(ids, tk.TaskID)
	}
	return ids
}

// refusal is how r refuses a request about the task id: its HTTP status,
// its error's code, message and data, with the id written <id>; "" when
// r is no error.
func refusal(r *rpcReply, id string) string {
	if r == nil || r.Error == nil {
		return ""
	}
	return strings.ReplaceAll(fmt.Sprintf("%d %d %q %s", r.status, r.Error.Code, r.Error.Message, r.Error.Data), id, "<id>")
}

// unknownTask is an id no task has.
const unknownTask = "0123456789abcdef0123456789abcdef"

// taskProbe is a request about a task: its method and the members of its
// params, %s standing for the task's id.
type taskProbe struct{ method, params string }

// send sends p about the task id as c. A refusal is at once: a reply that
// waits (a tasks/result that found the task) gives up within 5 s.
func (p taskProbe) send(ctx context.Context, c *namedClient, id string) (*rpcReply, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.do(ctx, p.method, id, fmt.Sprintf(p.params, id))
}

// asUnknown returns, for each probe, the refusal of a task that does not
// exist, which must be -32602.
func asUnknown(ctx context.Context, t *testing.T, c *namedClient, probes []taskProbe) map[string]string {
	t.Helper()
	want := map[string]string{}
	for _, p := range probes {
		r, err := p.send(ctx, c, unknownTask)
		if err != nil || r.Error == nil || r.Error.Code != -32602 {
			t.Fatalf("%s of a task that does not exist: %v %v, want -32602", p.method, err, r)
		}
		want[p.method] = refusal(r, unknownTask)
	}
	return want
}

// refusedAlike sends each probe about the task id as c, and returns how
// its answers differ from the refusals of a task that does not exist.
func refusedAlike(ctx context.Context, c *namedClient, id string, probes []taskProbe, unknown map[string]string) []string {
	var problems []string
	for _, p := range probes {
		r, err := p.send(ctx, c, id)
		if err != nil {
			problems = append(problems, err.Error())
		} else if got := refusal(r, id); got != unknown[p.method] {
			problems = append(problems, fmt.Sprintf("%s of another client's task: %v\n  want the refusal of a task that does not exist: %s",
				p.method, r, unknown[p.method]))
		}
	}
	return problems
}

// meanwhile runs other's attempts at the owner's task, rounds times (or
// until one goes wrong), and at the same time the owner's tasks/get of
// it, which must find it working, until other is done. It returns what
// went wrong on either side.
func meanwhile(ctx context.Context, rounds int, owner *namedClient, id string, other func() []string) (problems []string, gets int) {
	var otherProblems, ownerProblems []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the other client: ends after its rounds
		defer close(done)
		for i := 0; i < rounds && len(otherProblems) == 0; i++ {
			otherProblems = append(otherProblems, other()...)
		}
	})
	wg.Go(func() { // the owner: ends once the other client is done
		for {
			gets++
			r, err := owner.do(ctx, "tasks/get", id, `"taskId":"`+id+`"`)
			if tk := taskOf(r); err != nil || tk.TaskID != id || tk.Status != "working" {
				ownerProblems = append(ownerProblems, fmt.Sprintf("the owner's tasks/get while the other client tried: %v %v, want it working", err, r))
				return
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond): // a brisk poll, not a spin
			}
		}
	})
	wg.Wait()
	return append(otherProblems, ownerProblems...), gets
}

// Over HTTP, with two named clients each with its own token, a task is
// its creator's alone, in both generations: the other client's
// tasks/get, tasks/result, tasks/cancel and tasks/update are refused as
// for a task that does not exist (-32602, the same message), before and
// after the task ends, and its tasks/list does not list it. Meanwhile the
// owner follows its task at the same time, and its call, which the other
// tried to cancel, completes with its result.
func TestHTTPAnotherNamedClientCannotSeeATask(t *testing.T) {
	t.Parallel()
	dir := manifestDir(t, map[string]string{"notes.json": importManifest})
	path := filepath.Join(t.TempDir(), "clients.json")
	ownerToken, otherToken := addClient(t, path, "owner"), addClient(t, path, "other")
	const rounds = 10

	t.Run("2025-11-25", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		be := importBackend(t, release)
		b := startHTTPBridge(t, dir, be.Path, "--prefix", "", "--clients", path)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		owner, other := connectNamed(ctx, t, b.url, ownerToken, "2025-11-25"), connectNamed(ctx, t, b.url, otherToken, "2025-11-25")

		r, err := owner.do(ctx, "tools/call", "", `"name":"notes_import","arguments":{},"task":{"ttl":60000}`)
		tk := taskOf(r)
		if err != nil || tk.TaskID == "" || tk.Status != "working" {
			t.Fatalf("the owner's task: %v %v", err, r)
		}
		id := tk.TaskID
		// The other client's own task, ended at once: its list is not empty.
		r, err = other.do(ctx, "tools/call", "", `"name":"notes_import","arguments":{"now":true},"task":{"ttl":60000}`)
		theirs := taskOf(r).TaskID
		if err != nil || theirs == "" {
			t.Fatalf("the other client's task: %v %v", err, r)
		}
		probes := []taskProbe{
			{"tasks/get", `"taskId":"%s"`},
			{"tasks/result", `"taskId":"%s"`},
			{"tasks/cancel", `"taskId":"%s"`},
		}
		unknown := asUnknown(ctx, t, other, probes)
		// lists returns what is wrong with c's tasks/list: it must list
		// want and not hidden.
		lists := func(c *namedClient, who, want, hidden string) []string {
			r, err := c.do(ctx, "tasks/list", "", "")
			if ids := listed(r); err != nil || r.Error != nil || !slices.Contains(ids, want) || slices.Contains(ids, hidden) {
				return []string{fmt.Sprintf("%s's tasks/list: %v %v lists %q, want %s and not %s", who, err, r, ids, want, hidden)}
			}
			return nil
		}

		type outcome struct {
			r   *rpcReply
			err error
		}
		result := make(chan outcome, 1)
		go func() { // the owner's tasks/result: ends with the task, or ctx
			r, err := owner.do(ctx, "tasks/result", "", `"taskId":"`+id+`"`)
			result <- outcome{r, err}
		}()
		problems, gets := meanwhile(ctx, rounds, owner, id, func() []string {
			return append(refusedAlike(ctx, other, id, probes, unknown), lists(other, "the other client", theirs, id)...)
		})
		for _, p := range problems {
			t.Error(p)
		}
		t.Logf("the owner got its task %d times while the other client tried %d times", gets, rounds*(len(probes)+1))

		close(release)
		select {
		case res := <-result:
			var payload struct {
				StructuredContent json.RawMessage
				Meta              map[string]struct{ TaskID string } `json:"_meta"`
			}
			if res.err != nil || res.r.Error != nil || json.Unmarshal(res.r.Result, &payload) != nil ||
				string(payload.StructuredContent) != `{"imported":2}` || payload.Meta["io.modelcontextprotocol/related-task"].TaskID != id {
				t.Errorf("the owner's tasks/result: %v %v", res.err, res.r)
			}
		case <-ctx.Done():
			t.Fatal("the owner's tasks/result did not come")
		}
		if r, err := owner.do(ctx, "tasks/get", "", `"taskId":"`+id+`"`); err != nil || taskOf(r).Status != "completed" {
			t.Errorf("the owner's task, ended: %v %v", err, r)
		}
		for _, p := range append(refusedAlike(ctx, other, id, probes, unknown), lists(other, "the other client", theirs, id)...) {
			t.Errorf("once the task ended: %s", p)
		}
		for _, p := range lists(owner, "the owner", id, theirs) {
			t.Error(p)
		}
	})

	t.Run("2026-07-28", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		be := importBackend(t, release)
		b := startHTTPBridge(t, dir, be.Path, "--prefix", "", "--clients", path)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		owner, other := connectNamed(ctx, t, b.url, ownerToken, "2026-07-28"), connectNamed(ctx, t, b.url, otherToken, "2026-07-28")

		r, err := owner.do(ctx, "tools/call", "notes_import", `"name":"notes_import","arguments":{}`)
		tk := taskOf(r)
		if err != nil || tk.ResultType != "task" || tk.TaskID == "" || tk.Status != "working" {
			t.Fatalf("the owner's task: %v %v", err, r)
		}
		id := tk.TaskID
		probes := []taskProbe{
			{"tasks/get", `"taskId":"%s"`},
			{"tasks/cancel", `"taskId":"%s"`},
			{"tasks/update", `"taskId":"%s","inputResponses":{}`},
		}
		unknown := asUnknown(ctx, t, other, probes)
		problems, gets := meanwhile(ctx, rounds, owner, id, func() []string {
			return refusedAlike(ctx, other, id, probes, unknown)
		})
		for _, p := range problems {
			t.Error(p)
		}
		t.Logf("the owner got its task %d times while the other client tried %d times", gets, rounds*len(probes))

		close(release)
		for {
			r, err := owner.do(ctx, "tasks/get", id, `"taskId":"`+id+`"`)
			tk := taskOf(r)
			if err == nil && tk.Status == "working" {
				select {
				case <-time.After(50 * time.Millisecond): // as a client polls
					continue
				case <-ctx.Done():
					t.Fatal("the owner's task did not end")
				}
			}
			var result struct{ StructuredContent json.RawMessage }
			if err != nil || tk.Status != "completed" || json.Unmarshal(tk.Result, &result) != nil || string(result.StructuredContent) != `{"imported":2}` {
				t.Errorf("the owner's task, ended: %v %v", err, r)
			}
			break
		}
		for _, p := range refusedAlike(ctx, other, id, probes, unknown) {
			t.Errorf("once the task ended: %s", p)
		}
	})
}
