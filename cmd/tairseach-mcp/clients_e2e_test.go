//go:build unix

package main

// End-to-end tests of named clients: the built binary's clients command
// writes the file, the bridge serves it over HTTP and stdio, and the
// official Go SDK's clients use it, each with its own token.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// clientsManifest has a read-only tool, a destructive one and a slow one.
const clientsManifest = `{
  "id": "notes", "name": "Notes",
  "tools": [
    {"name": "notes.list", "description": "List the notes.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
    {"name": "notes.delete", "description": "Delete a note.", "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
     "annotations": {"destructiveHint": true}},
    {"name": "notes.slow", "description": "Slow on purpose.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}
  ],
  "implementation": {"methods": {"notes.list": "notes.create", "notes.delete": "notes.create", "notes.slow": "debug.sleep"}}
}`

// addClient runs `tairseach-mcp clients add NAME FLAGS... --clients path`
// and returns the token it printed.
func addClient(t *testing.T, path, name string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"clients", "add", name, "--clients", path}, flags...)...)
	cmd.Env = []string{"HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("clients add %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// clientsCommand runs another clients command, which must succeed.
func clientsCommand(t *testing.T, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"clients"}, args...), "--clients", path)...)
	cmd.Env = []string{"HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clients %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// bearer is an http.RoundTripper that sends a bearer token.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs connects the Go SDK's Streamable HTTP client to url with
// token, in protocol version (the SDK's default when ""), with opts.
func connectAs(t *testing.T, url, token, version string, opts ...*mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	var o *mcp.ClientOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-" + version, Version: "1"}, o)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, so)
	if err != nil {
		t.Fatalf("connect with a token (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func listNames(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", err
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, ","), nil
}

// Two named clients at once over HTTP, in either era, see their own tool
// lists; the read-only one is refused the destructive tool the other
// calls; a request without a client's token is refused, loopback
// included; and the audit log names each call's client.
func TestHTTPTwoNamedClientsAtOnce(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": clientsManifest})
	path := filepath.Join(t.TempDir(), "clients.json")
	reader := addClient(t, path, "reader", "--read-only")
	writer := addClient(t, path, "writer", "--exclude", "notes.slow")
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	b := startHTTPBridge(t, dir, be.Path, "--clients", path, "--audit-log", auditLog)
	if !strings.Contains(b.log(), "(loopback only, bearer token required: 2 named clients with their tokens)") {
		t.Errorf("the start line does not say who may connect:\n%s", b.log())
	}
	if resp, body := post(t, &http.Client{}, b.url, nil, initializeBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token, on loopback: %d %s", resp.StatusCode, body)
	}

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			rs, ws := connectAs(t, b.url, reader, version), connectAs(t, b.url, writer, version)
			type outcome struct {
				list       string
				listErr    error
				delete     *mcp.CallToolResult
				deleteErr  error
				listResult *mcp.CallToolResult
			}
			var got [2]outcome
			var wg sync.WaitGroup
			for i, cs := range []*mcp.ClientSession{rs, ws} {
				wg.Go(func() { // both clients at once
					o := &got[i]
					o.list, o.listErr = listNames(t.Context(), cs)
					o.delete, o.deleteErr = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"title": version}})
					o.listResult, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_list", Arguments: map[string]any{}})
				})
			}
			wg.Wait()
			if r := got[0]; r.listErr != nil || r.list != "tairseach_notes_list,tairseach_notes_slow" {
				t.Errorf("reader's list: %q %v", r.list, r.listErr)
			}
			if w := got[1]; w.listErr != nil || w.list != "tairseach_notes_list,tairseach_notes_delete" {
				t.Errorf("writer's list: %q %v", w.list, w.listErr)
			}
			if r := got[0]; r.deleteErr == nil || !strings.Contains(r.deleteErr.Error(), "unknown tool") {
				t.Errorf("reader called the destructive tool: %+v %v", r.delete, r.deleteErr)
			}
			if w := got[1]; w.deleteErr != nil || w.delete.IsError {
				t.Errorf("writer's delete: %+v %v", w.delete, w.deleteErr)
			}
			for i, o := range got {
				if o.listResult == nil || o.listResult.IsError {
					t.Errorf("client %d's call of the read-only tool: %+v", i, o.listResult)
				}
			}
		})
	}

	b.cmd.Process.Signal(os.Interrupt)
	<-b.exited
	byClient := map[string][]string{}
	for _, e := range auditEntries(t, auditLog) {
		byClient[e.Principal] = append(byClient[e.Principal], e.Name+" "+e.Outcome)
	}
	for principal, want := range map[string][]string{
		"client:reader": {"tairseach_notes_delete refused", "tairseach_notes_list ok"},
		"client:writer": {"tairseach_notes_delete ok", "tairseach_notes_list ok"},
	} {
		got := slices.Compact(slices.Sorted(slices.Values(byClient[principal])))
		if !slices.Equal(got, want) {
			t.Errorf("the audit log's calls of %s: %q, want %q", principal, got, want)
		}
	}
}

// A client over its rate gets 429, with Retry-After and a JSON-RPC error
// saying when to try again, while another client's calls go on.
func TestHTTPAClientOverItsRate(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": clientsManifest})
	path := filepath.Join(t.TempDir(), "clients.json")
	script := addClient(t, path, "script", "--calls-per-minute", "3")
	other := addClient(t, path, "other")
	b := startHTTPBridge(t, dir, be.Path, "--clients", path)

	hc := &http.Client{}
	call := func(token string, id int) (*http.Response, string) {
		return post(t, hc, b.url, map[string]string{"Authorization": "Bearer " + token, "MCP-Protocol-Version": "2026-07-28",
			"Mcp-Method": "tools/call", "Mcp-Name": "tairseach_notes_list"},
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_notes_list","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id))
	}
	for i := range 3 {
		if resp, body := call(script, i); resp.StatusCode != 200 {
			t.Fatalf("script's call %d, within its rate: %d %s", i+1, resp.StatusCode, body)
		}
	}
	resp, body := call(script, 7)
	var refusal struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				RetryAfterMs int `json:"retryAfterMs"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &refusal); resp.StatusCode != http.StatusTooManyRequests || err != nil ||
		refusal.ID != 7 || refusal.Error.Code != -32000 || refusal.Error.Data.RetryAfterMs <= 0 || refusal.Error.Data.RetryAfterMs > 20000 {
		t.Errorf("script's fourth call: %d %s, want 429 and -32000 with retryAfterMs (at most 20 s: one call of 3 a minute)", resp.StatusCode, body)
	}
	if ra := resp.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}

	// The other client, at once and over the SDK, is not held back; the
	// script's SDK session sees its call fail, and lives on.
	cs := connectAs(t, b.url, other, "2025-11-25")
	for i := range 10 {
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_list", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Fatalf("the other client's call %d while script is over its rate: %v %+v", i+1, err, res)
		}
	}
	ss := connectAs(t, b.url, script, "2025-11-25")
	if _, err := ss.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_list", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("script's SDK call over its rate: %v", err)
	}
	if _, err := listNames(t.Context(), ss); err != nil {
		t.Errorf("script's session after a refused call: %v", err)
	}
}

// A client removed from the file while its session is open loses it: its
// GET stream closes, its token is refused; another's session lives on.
func TestHTTPAClientRemovedWhileItsSessionIsOpen(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": clientsManifest})
	path := filepath.Join(t.TempDir(), "clients.json")
	gone := addClient(t, path, "gone")
	stays := addClient(t, path, "stays")
	b := startHTTPBridge(t, dir, be.Path, "--clients", path)
	hc := &http.Client{}

	auth := map[string]string{"Authorization": "Bearer " + gone}
	resp, body := post(t, hc, b.url, auth, initializeBody)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	session := map[string]string{"Authorization": "Bearer " + gone, "Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, b.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range session {
		req.Header.Set(k, v)
	}
	get, err := hc.Do(req)
	if err != nil || get.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, get)
	}
	defer get.Body.Close()
	ended := make(chan error, 1)
	go func() { // reads the stream until the bridge ends it
		sc := bufio.NewScanner(get.Body)
		for sc.Scan() {
		}
		ended <- sc.Err()
	}()
	listChanged := make(chan struct{}, 10)
	cs := connectAs(t, b.url, stays, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} }})
	if _, err := listNames(t.Context(), cs); err != nil {
		t.Fatal(err)
	}

	removed := time.Now()
	clientsCommand(t, path, "remove", "gone")
	select {
	case <-ended:
		t.Logf("the removed client's GET stream ended %v after its removal", time.Since(removed))
	case <-time.After(10 * time.Second):
		t.Fatal("the removed client's GET stream is still open")
	}
	b.waitLog(t, `"sessions":1`)
	if resp, body := post(t, hc, b.url, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the removed client's session: %d %s, want 401", resp.StatusCode, body)
	}
	if names, err := listNames(t.Context(), cs); err != nil || names == "" {
		t.Errorf("the other client's session: %q %v", names, err)
	}
	select { // the clients changed: every session lists again
	case <-listChanged:
	case <-time.After(10 * time.Second):
		t.Error("the other client was not told to list its tools again")
	}
}

// Over stdio, --client applies that client's policy: a read-only client's
// bridge lists no destructive tool and refuses to call it; its rate makes
// a call past it an isError result; its max-in-flight lets one call run
// at a time.
func TestStdioNamedClient(t *testing.T) {
	t.Parallel()
	var running, most atomic.Int32
	be := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if req.Method == "debug.sleep" {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
			}
		}
		return map[string]any{"ok": true}, nil
	})
	dir := manifestDir(t, map[string]string{"notes.json": clientsManifest})
	path := filepath.Join(t.TempDir(), "clients.json")
	addClient(t, path, "desktop", "--read-only", "--calls-per-minute", "4", "--max-in-flight", "1")
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	cs := connectSDK(t, bridgeCmd(dir, be.Path, "--clients", path, "--client", "desktop", "--audit-log", auditLog), "2025-11-25", nil)
	ctx := t.Context()

	if names, err := listNames(ctx, cs); err != nil || names != "tairseach_notes_list,tairseach_notes_slow" {
		t.Errorf("the read-only client's list: %q %v", names, err)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"title": "x"}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("the read-only client called the destructive tool: %v", err)
	}
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 3)
	for i := range results {
		wg.Go(func() {
			results[i], _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_slow", Arguments: map[string]any{}})
		})
	}
	wg.Wait()
	for i, res := range results {
		if res == nil || res.IsError {
			t.Errorf("slow call %d: %+v", i+1, res)
		}
	}
	if m := most.Load(); m != 1 {
		t.Errorf("the backend ran %d calls at once, want 1 (--max-in-flight 1)", m)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_list", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "over its rate of calls") {
		t.Errorf("the fifth call of a client allowed 4 a minute: %+v %v, want an isError result", res, err)
	}
	cs.Close()
	for _, e := range auditEntries(t, auditLog) {
		if e.Principal != "client:desktop" {
			t.Errorf("an audit entry for %q, want client:desktop: %+v", e.Principal, e)
		}
	}
}

// A bridge over stdio whose client is not in the file does not start, and
// says why; --client goes with stdio only.
func TestStdioNamedClientRefusals(t *testing.T) {
	t.Parallel()
	dir := manifestDir(t, map[string]string{"notes.json": clientsManifest})
	path := filepath.Join(t.TempDir(), "clients.json")
	addClient(t, path, "desktop")
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--clients", path, "--client", "nobody"}, 2, "has no such client"},
		{[]string{"--clients", filepath.Join(dir, "none.json"), "--client", "desktop"}, 2, "there is no clients file"},
		{[]string{"--clients", path, "--client", "desktop", "--transport", "http"}, 2, "over HTTP each client's token selects it"},
	} {
		cmd := bridgeCmd(dir, filepath.Join(dir, "none.sock"), tc.args...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code || !strings.Contains(string(out), tc.says) {
			t.Errorf("%q: %v\n%s\nwant exit %d saying %q", tc.args, err, out, tc.code, tc.says)
		}
	}
	os.Chmod(path, 0o644)
	out, err := bridgeCmd(dir, filepath.Join(dir, "none.sock"), "--clients", path, "--transport", "http", "--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "others may read it") {
		t.Errorf("a clients file others may read: %v\n%s", err, out)
	}
}
