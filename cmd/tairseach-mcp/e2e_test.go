package main

// End-to-end tests: they build the tairseach-mcp binary and drive it as
// clients do, through its stdin and stdout, with a fake backend
// (sockettest) behind it. Every line the binary writes is checked against
// the official MCP schema of the version in force.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tsbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "tairseach-mcp")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tairseach-mcp:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// notesManifest is a manifest like the real ones: dotted names, an
// outputSchema, annotations, a tool without mapping.
const notesManifest = `{
  "id": "notes", "name": "Notes", "version": "1.0.0",
  "tools": [
    {"name": "notes.create", "title": "Create a note", "description": "Create a note.",
     "inputSchema": {"type": "object", "properties": {"title": {"type": "string", "minLength": 1}}, "required": ["title"]},
     "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
     "annotations": {"destructiveHint": false}},
    {"name": "notes.slow", "description": "Slow on purpose.", "inputSchema": {"type": "object"}},
    {"name": "notes.fail", "description": "Always refused.", "inputSchema": {"type": "object"}},
    {"name": "notes.unmapped", "description": "No method.", "inputSchema": {"type": "object"}}
  ],
  "implementation": {"methods": {"notes.create": "notes.create", "notes.slow": "debug.sleep", "notes.fail": "secrets.read"}}
}`

// backend is a fake Tairseach backend with the methods notesManifest maps.
func backend(t *testing.T) *sockettest.Server {
	t.Helper()
	return sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		switch req.Method {
		case "notes.create":
			var p struct{ Title string }
			_ = json.Unmarshal(req.Params, &p)
			return map[string]any{"id": "n1", "title": p.Title}, nil
		case "debug.sleep":
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
			}
			return map[string]any{"slept": true}, nil
		case "secrets.read":
			return nil, &sockettest.Error{Code: -32011, Message: "Permission denied"}
		}
		return nil, &sockettest.Error{Code: -32601, Message: "method not found"}
	})
}

func manifestDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// bridgeCmd returns the command line of a bridge over dir and sock, with
// a clean environment so no TAIRSEACH_ variable of the developer leaks in.
func bridgeCmd(dir, sock string, extra ...string) *exec.Cmd {
	args := append([]string{"--manifests", dir, "--socket", sock, "--log-format", "json"}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = []string{"HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH")}
	dieWithTheTest(cmd)
	return cmd
}

func connectSDK(t *testing.T, cmd *exec.Cmd, version string, onListChanged func()) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if onListChanged != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { onListChanged() }
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, so)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(res *mcp.ListToolsResult) []string {
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestGoSDKClient(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name, version, want string
	}{
		{"forced to 2025-11-25", "2025-11-25", "2025-11-25"},
		{"default mode probes server/discover and stays modern", "", "2026-07-28"},
		{"forced to 2026-07-28", "2026-07-28", "2026-07-28"},
		{"forced to 2025-06-18", "2025-06-18", "2025-06-18"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			be := backend(t)
			dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
			cs := connectSDK(t, bridgeCmd(dir, be.Path), mode.version, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != mode.want {
				t.Errorf("negotiated %s, want %s", got, mode.want)
			}
			if si := cs.InitializeResult().ServerInfo; si == nil || si.Name != "tairseach-mcp" {
				t.Errorf("server info = %+v", si)
			}
			ctx := t.Context()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			if got, want := strings.Join(toolNames(list), ","), "tairseach_notes_create,tairseach_notes_slow,tairseach_notes_fail"; got != want {
				t.Errorf("tools = %s, want %s", got, want)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": "milk"}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if res.IsError || !strings.Contains(textOf(res), `"id":"n1"`) {
				t.Errorf("notes.create = %+v %s", res, textOf(res))
			}
			if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"title":"milk"`) {
				t.Errorf("structuredContent = %s", sc)
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_fail", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !res.IsError || !strings.Contains(textOf(res), "-32011") || !strings.Contains(textOf(res), "Permission denied") {
				t.Errorf("backend error result = %s", textOf(res))
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": 5}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !res.IsError || !strings.Contains(textOf(res), "arguments.title") {
				t.Errorf("invalid arguments result = %s", textOf(res))
			}

			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_nope", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("unknown tool: err = %v", err)
			}

			// Cancelling a call abandons it; the session goes on.
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "tairseach_notes_slow", Arguments: map[string]any{}})
				done <- err
			}()
			waitForMethod(t, be, "debug.sleep")
			cancel()
			if err := <-done; err == nil {
				t.Error("cancelled call returned no error")
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Errorf("ListTools after a cancellation: %v", err)
			}
			// The backend saw the valid calls only.
			if n := countMethod(be, "notes.create"); n != 1 {
				t.Errorf("backend received notes.create %d times, want 1 (invalid arguments must not reach it)", n)
			}
		})
	}
}

func TestGoSDKClientSeesListChanged(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			be := backend(t)
			dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
			changed := make(chan struct{}, 10)
			cs := connectSDK(t, bridgeCmd(dir, be.Path), version, func() { changed <- struct{}{} })
			// A client lists before it can care about changes to the list.
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			extra := `{"id":"x","tools":[{"name":"extra.tool","description":"New.","inputSchema":{"type":"object"}}],"implementation":{"methods":{"extra.tool":"notes.create"}}}`
			if err := os.WriteFile(filepath.Join(dir, "extra.json"), []byte(extra), 0o644); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no tools/list_changed within 10s of adding a manifest")
			}
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(toolNames(list), ","), "tairseach_extra_tool") {
				t.Errorf("new tool missing from %v", toolNames(list))
			}
		})
	}
}

func countMethod(be *sockettest.Server, method string) int {
	n := 0
	for _, r := range be.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// waitForMethod waits until the backend has received a request for method.
func waitForMethod(t *testing.T, be *sockettest.Server, method string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if !be.WaitRequest(ctx, func(r sockettest.Request) bool { return r.Method == method }) {
		t.Fatalf("the backend received no %s within 10s", method)
	}
}

// rawSession runs the binary with lines on stdin (then EOF) and returns
// stdout lines, stderr and the exit code. Every stdout line is checked
// against the schema of version.
func rawSession(t *testing.T, cmd *exec.Cmd, version string, lines ...string) (out []string, stderr string, code int) {
	t.Helper()
	checker := protocoltest.NewChecker(version)
	var in bytes.Buffer
	for _, l := range lines {
		checker.ClientLine([]byte(l))
		in.WriteString(l + "\n")
	}
	cmd.Stdin = &in
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&so)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if err := checker.ServerLine([]byte(line)); err != nil {
			t.Errorf("invalid message on stdout: %s\n  %v", line, err)
		}
		out = append(out, line)
	}
	return out, se.String(), code
}

func TestPipedSessionEndsAtEOFAfterCallsInFlight(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	out, _, code := rawSession(t, bridgeCmd(dir, be.Path), "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_notes_slow","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	)
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if len(out) != 2 {
		t.Fatalf("got %d responses, want 2: %q", len(out), out)
	}
	// tools/list is not held up by the slow call.
	if !strings.Contains(out[0], `"id":2`) || !strings.Contains(out[1], `"id":1`) || !strings.Contains(out[1], `slept`) {
		t.Errorf("responses = %q", out)
	}
}

func TestEveryStdoutLineIsAValidMessageAtDebugLevel(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{
		"notes.json":    notesManifest,
		"broken.json":   `{"id": "broken", "tools": [`,
		"nested/a.json": `{"id":"a","tools":[{"name":"a.b","description":"A.","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a.b":"notes.create"}}}`,
	})
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			lines := []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"x"}}}`,
				`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"tairseach_notes_fail","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tairseach_nope"}}`,
				`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
				`{"jsonrpc":"2.0","id":9,"method":"resources/list"}`,
				`{"jsonrpc":"2.0","id":10,"method":"prompts/list"}`,
				`not json`,
				`{"jsonrpc":"2.0","id":11,"method":"nope"}`,
				`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"tairseach_notes_slow","arguments":{},"_meta":{"progressToken":"p"}}}`,
			}
			out, stderr, code := rawSession(t, bridgeCmd(dir, be.Path, "--log-level", "trace"), version, lines...)
			if code != 0 {
				t.Errorf("exit code %d", code)
			}
			if len(out) < 13 {
				t.Errorf("got %d lines, want at least 13 (one per request): %q", len(out), out)
			}
			if !strings.Contains(stderr, "broken.json") {
				t.Errorf("stderr does not report broken.json:\n%s", stderr)
			}
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !json.Valid([]byte(l)) {
					t.Errorf("stderr line is not a JSON log line: %s", l)
				}
			}
		})
	}
}

func TestEveryStdoutLineIsAValidMessageInTheModernEra(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug","progressToken":"p"}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"x"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tairseach_notes_fail","arguments":{},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"tairseach_notes_slow","arguments":{},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":8,"method":"resources/templates/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	}
	out, _, code := rawSession(t, bridgeCmd(dir, be.Path), "2026-07-28", lines...)
	if code != 0 {
		t.Errorf("exit code %d", code)
	}
	// Nine responses, the listen stream's acknowledgement, and its final
	// result at EOF counted among the responses.
	var responses int
	for _, l := range out {
		if strings.Contains(l, `"id":`) && !strings.Contains(l, `"method"`) {
			responses++
		}
	}
	if responses != 9 {
		t.Errorf("%d responses, want 9:\n%s", responses, strings.Join(out, "\n"))
	}
}

// liveBridge runs the bridge with pipes for a conversation.
type liveBridge struct {
	t     *testing.T
	stdin io.WriteCloser
	lines chan string
	cmd   *exec.Cmd
}

func startLive(t *testing.T, cmd *exec.Cmd) *liveBridge {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lb := &liveBridge{t: t, stdin: stdin, lines: make(chan string, 100), cmd: cmd}
	// The reader ends when the bridge closes stdout.
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lb.lines <- sc.Text()
		}
		close(lb.lines)
	}()
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return lb
}

func (lb *liveBridge) send(line string) {
	io.WriteString(lb.stdin, line+"\n")
}

// next returns the next line containing want.
func (lb *liveBridge) next(want string) string {
	lb.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lb.lines:
			if !ok {
				lb.t.Fatalf("bridge exited before writing %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			lb.t.Fatalf("no line with %q within 10s", want)
		}
	}
}

func TestReloadProblemsReachClientsThatAskedForLogs(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	lb := startLive(t, bridgeCmd(dir, be.Path))
	lb.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	lb.next(`"id":1`)
	lb.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`)
	lb.next(`"id":2`)
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"id":"notes","tools":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Warnings of the first load may come first, when it ends after setLevel.
	msg := lb.next(`invalid JSON`)
	if !strings.Contains(msg, `"method":"notifications/message"`) || !strings.Contains(msg, "notes.json") || !strings.Contains(msg, `"level":"error"`) {
		t.Errorf("log message = %s", msg)
	}
	// The last good version keeps serving.
	lb.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"still here"}}}`)
	if r := lb.next(`"id":3`); strings.Contains(r, "isError") {
		t.Errorf("call after a bad save = %s", r)
	}
}

func TestBackendDown(t *testing.T) {
	t.Parallel()
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	sock := filepath.Join(t.TempDir(), "absent.sock")
	out, _, code := rawSession(t, bridgeCmd(dir, sock), "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"x"}}}`,
	)
	if code != 0 || len(out) != 2 {
		t.Fatalf("code %d, out %q", code, out)
	}
	if !strings.Contains(out[0], "tairseach_notes_create") {
		t.Errorf("a dead backend must still list tools: %s", out[0])
	}
	if !strings.Contains(out[1], `"isError":true`) || !strings.Contains(out[1], "not reachable") || !strings.Contains(out[1], sock) {
		t.Errorf("backend down result = %s", out[1])
	}
}

func TestBackendTroubleReachesTheClientThatAskedForLogs(t *testing.T) {
	t.Parallel()
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	sock := filepath.Join(t.TempDir(), "absent.sock")
	call := func(id, meta string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"x"}` + meta + `}}`
	}
	t.Run("legacy, after logging/setLevel", func(t *testing.T) {
		t.Parallel()
		out, _, _ := rawSession(t, bridgeCmd(dir, sock), "2025-11-25",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`,
			call("3", ""))
		if all := strings.Join(out, "\n"); !strings.Contains(all, `"method":"notifications/message"`) || !strings.Contains(all, "backend unavailable") {
			t.Errorf("no warning about the backend:\n%s", all)
		}
	})
	t.Run("modern, with the request's logLevel", func(t *testing.T) {
		t.Parallel()
		meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
		out, _, _ := rawSession(t, bridgeCmd(dir, sock), "2026-07-28",
			call("1", meta+`}`), call("2", meta+`,"io.modelcontextprotocol/logLevel":"warning"}`))
		var logs []string
		for _, l := range out {
			if strings.Contains(l, `"notifications/message"`) {
				logs = append(logs, l)
			}
		}
		if len(logs) != 1 || !strings.Contains(logs[0], "backend unavailable") {
			t.Errorf("want one warning, for the request that asked: %q", logs)
		}
	})
}

func TestBadManifestIsSkippedOthersServe(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{
		"notes.json": notesManifest,
		"bad.json":   `{"id": 3, "tools": []}`,
		"bad2.json":  `{"id":"b","tools":[{"name":"b.x","description":"B.","inputSchema":{"type":"array"}}],"implementation":{"methods":{"b.x":"b.x"}}}`,
	})
	out, stderr, _ := rawSession(t, bridgeCmd(dir, be.Path), "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if len(out) != 1 || !strings.Contains(out[0], "tairseach_notes_create") || strings.Contains(out[0], "b_x") {
		t.Errorf("tools/list = %q", out)
	}
	for _, want := range []string{"bad.json", "bad2.json", `tools[0].inputSchema.type`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// SIGTERM (a client ending the session), SIGINT (Ctrl-C) and SIGHUP (a
// closed terminal) end it gracefully: the call in flight is answered.
func TestSignalsFinishCallsInFlight(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			be := backend(t)
			dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
			cmd := bridgeCmd(dir, be.Path)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_notes_slow","arguments":{}}}`+"\n")
			waitForMethod(t, be, "debug.sleep")
			cmd.Process.Signal(sig)
			var lines []string
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit: %v", err)
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "slept") {
				t.Errorf("stdout = %q, want the slow call's response", lines)
			}
			stdin.Close()
		})
	}
}

// A client that closes the bridge's stdout while keeping stdin open ends
// the session: the bridge notices at its next write, cancels what is in
// flight and exits with status 1 and the reason, not killed by SIGPIPE.
func TestClosedStdoutEndsTheSession(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	cmd := bridgeCmd(dir, be.Path)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_notes_slow","arguments":{}}}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("exit: %v, want status 1; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the bridge did not end with its stdout closed; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("stderr does not say why:\n%s", stderr.String())
	}
}

// A session that ends before the first load of the manifests is done (a
// client that starts the bridge and closes stdin at once) still reports
// the manifests' problems and the summary line.
func TestASessionEndingBeforeTheFirstLoadStillReportsProblems(t *testing.T) {
	t.Parallel()
	be := backend(t)
	files := map[string]string{"bad.json": `{"id": 3, "tools": []}`}
	for i := range 400 {
		files[fmt.Sprintf("m%03d.json", i)] = strings.ReplaceAll(notesManifest, `"notes.`, fmt.Sprintf(`"n%03d.`, i))
	}
	dir := manifestDir(t, files)
	_, stderr, code := rawSession(t, bridgeCmd(dir, be.Path), "2025-11-25")
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	for _, want := range []string{"bad.json", "manifest problems; run 'tairseach-mcp validate' for the list"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// With no backend running the bridge says so once at start, and serves.
func TestNoBackendAtStartIsOneWarning(t *testing.T) {
	t.Parallel()
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	sock := filepath.Join(t.TempDir(), "absent.sock")
	cmd := bridgeCmd(dir, sock)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	found := make(chan string, 1)
	go func() { // reads stderr until the bridge exits
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "backend not reachable") {
				found <- sc.Text()
			}
		}
		close(found)
	}()
	select {
	case line := <-found:
		if !strings.Contains(line, sock) || !strings.Contains(line, "no socket there; is the backend running?") {
			t.Errorf("warning = %s", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no warning about the missing backend within 10s")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("bridge: %v", err)
	}
	if line, more := <-found; more {
		t.Errorf("a second warning: %s", line)
	}
}

// A second signal ends the grace period at once: the call that would
// have had 5 s is cancelled, still answered, and the process exits, over
// stdio and over HTTP.
func TestASecondSignalEndsTheGracePeriod(t *testing.T) {
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"t"}}}`
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			hung := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
			cmd := bridgeCmd(dir, hung.Path, "--transport", transport, "--listen", "127.0.0.1:0")
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			answered := make(chan string, 1)
			if transport == "stdio" {
				io.WriteString(stdin, call+"\n")
				go func() { b, _ := io.ReadAll(stdout); answered <- string(b) }()
			} else {
				sc := bufio.NewScanner(stderr)
				var url string
				for url == "" && sc.Scan() {
					if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
						url = m[1]
					}
				}
				go io.Copy(io.Discard, stderr)
				go func() { // the call in flight, without a session: answered in the legacy era's default
					req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						answered <- err.Error()
						return
					}
					resp.Body.Close()
					req, _ = http.NewRequest("POST", url, strings.NewReader(call))
					req.Header = resp.Request.Header.Clone()
					req.Header.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
					if resp, err = http.DefaultClient.Do(req); err != nil {
						answered <- err.Error()
						return
					}
					b, _ := io.ReadAll(resp.Body)
					answered <- string(b)
				}()
			}
			waitForMethod(t, hung, "notes.create")
			cmd.Process.Signal(syscall.SIGTERM)
			time.Sleep(200 * time.Millisecond) // well inside the 5 s grace period
			start := time.Now()
			cmd.Process.Signal(syscall.SIGTERM)
			var out string
			select {
			case out = <-answered:
			case <-time.After(4 * time.Second):
				t.Fatal("the call in flight was not answered after the second signal")
			}
			cmd.Wait()
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("exited %v after the second signal, want at once", took)
			}
			if !strings.Contains(out, `"id":1,"result"`) || !strings.Contains(out, `"isError":true`) {
				t.Errorf("the call in flight was not answered: %q", out)
			}
			stdin.Close()
		})
	}
}
