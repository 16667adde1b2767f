//go:build unix

package main

// End-to-end tests of tasks: the built binary, over stdio in both
// protocol generations and over HTTP, with a backend whose import
// reports progress and waits for the test.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// importManifest declares notes.import, which runs as a task when the
// client can take one.
const importManifest = `{"id":"notes","tools":[
 {"name":"notes.import","description":"Imports notes.","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}],
 "implementation":{"methods":{"notes.import":"notes.import"}}}`

// importBackend answers notes.import once release is closed, after
// reporting its progress; or at once when its argument "now" is true.
func importBackend(t *testing.T, release <-chan struct{}) *sockettest.Server {
	return sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		var p struct{ Now bool }
		_ = json.Unmarshal(req.Params, &p)
		if !p.Now {
			if err := req.Peer.Notify("notifications/progress", map[string]any{"progress": 1, "total": 2, "message": "1 of 2 notes"}); err != nil {
				return nil, err
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return map[string]int{"imported": 2}, nil
	})
}

// checkedBridge is a live bridge whose every line is checked against the
// schema of its version.
type checkedBridge struct {
	*liveBridge
	checker *protocoltest.Checker
}

func (b *checkedBridge) send(line string) {
	b.checker.ClientLine([]byte(line))
	b.liveBridge.send(line)
}

// next returns the next line holding want, checked (the lines before it
// too).
func (b *checkedBridge) next(want string) string {
	b.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-b.lines:
			if !ok {
				b.t.Fatalf("bridge exited before writing %q", want)
			}
			if err := b.checker.ServerLine([]byte(l)); err != nil {
				b.t.Errorf("invalid message %.300s\n  %v", l, err)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			b.t.Fatalf("no line with %q within 10s", want)
		}
	}
}

// taskIDIn returns the task id in a line.
func taskIDIn(t *testing.T, line string) string {
	t.Helper()
	_, rest, ok := strings.Cut(line, `"taskId":"`)
	if !ok {
		t.Fatalf("no task in %s", line)
	}
	id, _, _ := strings.Cut(rest, `"`)
	return id
}

const tasksMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// Over stdio a client of 2025-11-25 creates a task, polls it and fetches
// its result; one of 2026-07-28 creates one and cancels it; the audit log
// records each task's creation and end.
func TestTasksOverStdio(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	be := importBackend(t, release)
	dir := manifestDir(t, map[string]string{"notes.json": importManifest})
	audit := filepath.Join(t.TempDir(), "audit.log")
	b := &checkedBridge{startLive(t, bridgeCmd(dir, be.Path, "--prefix", "", "--audit-log", audit)), protocoltest.NewChecker("2025-11-25")}
	b.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if init := b.next(`"id":1`); !strings.Contains(init, `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize declares no tasks: %s", init)
	}
	b.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if list := b.next(`"id":2`); !strings.Contains(list, `"execution":{"taskSupport":"optional"}`) {
		t.Errorf("tools/list: %s", list)
	}
	b.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes_import","arguments":{},"task":{"ttl":60000}}}`)
	id := taskIDIn(t, b.next(`"id":3`))
	b.send(`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"` + id + `"}}`)
	if got := b.next(`"id":4`); !strings.Contains(got, `"status":"working","statusMessage":"1 of 2 notes"`) {
		t.Errorf("tasks/get: %s", got)
	}
	b.send(`{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"` + id + `"}}`)
	close(release)
	if got := b.next(`"id":5`); !strings.Contains(got, `"structuredContent":{"imported":2}`) || !strings.Contains(got, `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("tasks/result: %s", got)
	}

	// 2026-07-28, on the same stream: created, then cancelled.
	b.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"notes_import","arguments":{"now":false},` + tasksMeta + `}}`)
	created := b.next(`"id":6`)
	if !strings.Contains(created, `"resultType":"task"`) {
		t.Fatalf("no task in 2026-07-28: %s", created)
	}
	modernID := taskIDIn(t, created)
	b.send(`{"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"taskId":"` + modernID + `",` + tasksMeta + `}}`)
	b.next(`"id":7`)
	b.send(`{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"` + modernID + `",` + tasksMeta + `}}`)
	if got := b.next(`"id":8`); !strings.Contains(got, `"status":"cancelled"`) && !strings.Contains(got, `"status":"completed"`) {
		t.Errorf("tasks/get after tasks/cancel: %s", got)
	}
	b.stdin.Close()
	b.cmd.Wait()

	log, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"task","name":"notes_import"`, `"outcome":"created"`, `"outcome":"completed"`, `"task":"` + id + `"`, `"task":"` + modernID + `"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the audit log has no %s:\n%s", want, log)
		}
	}
}

// The Go SDK, which takes no tasks, lists a tool that allows them and
// calls it as an ordinary call, in every mode.
func TestGoSDKCallsAToolThatAllowsTasks(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	be := importBackend(t, release)
	dir := manifestDir(t, map[string]string{"notes.json": importManifest})
	for _, version := range []string{"", "2025-11-25", "2026-07-28"} {
		cs := connectSDK(t, bridgeCmd(dir, be.Path, "--prefix", ""), version, nil)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notes_import", Arguments: map[string]any{}})
		if err != nil || res.IsError || !strings.Contains(textOf(res), `"imported":2`) {
			t.Errorf("version %q: %v %+v", version, err, res)
		}
	}
}

// Over HTTP a task outlives the connection that created it: the local
// user finds its result on another.
func TestATaskOutlivesItsHTTPConnection(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	be := importBackend(t, release)
	dir := manifestDir(t, map[string]string{"notes.json": importManifest})
	b := startHTTPBridge(t, dir, be.Path, "--prefix", "")
	checker := protocoltest.NewChecker("2026-07-28")
	post := func(body, name string) string {
		t.Helper()
		checker.ClientLine([]byte(body))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, b.url, strings.NewReader(body))
		env := struct{ Method string }{}
		_ = json.Unmarshal([]byte(body), &env)
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": env.Method, "Mcp-Name": name} {
			req.Header.Set(k, v)
		}
		// A connection of its own each time: closed once answered.
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if err := checker.ServerLine(data); err != nil {
			t.Errorf("invalid message %.300s\n  %v", data, err)
		}
		return string(data)
	}
	id := taskIDIn(t, post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_import","arguments":{},`+tasksMeta+`}}`, "notes_import"))
	close(release)
	for {
		got := post(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`",`+tasksMeta+`}}`, id)
		if strings.Contains(got, `"status":"working"`) {
			time.Sleep(100 * time.Millisecond) // the task's pollInterval, as a client polls
			continue
		}
		if !strings.Contains(got, `"status":"completed"`) || !strings.Contains(got, `"imported":2`) {
			t.Errorf("the task from another connection: %s", got)
		}
		break
	}
}
