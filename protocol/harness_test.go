package protocol

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
)

// fakeTools is a ToolProvider whose tools run the test's functions.
type fakeTools struct {
	mu    sync.Mutex
	set   *ToolSet
	calls map[string]func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error)
}

func (f *fakeTools) Tools() *ToolSet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.set
}

func (f *fakeTools) setTools(ts *ToolSet) {
	f.mu.Lock()
	f.set = ts
	f.mu.Unlock()
}

func (f *fakeTools) CallTool(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
	for _, t := range f.Tools().Tools() {
		if t.Name != req.Name {
			continue
		}
		if run, ok := f.calls[req.Name]; ok {
			return run(ctx, call, req)
		}
		return echo(ctx, call, req)
	}
	return nil, ErrInvalidParams
}

func yes() *bool { b := true; return &b }

// testTools has one tool with every optional field, a plain one, and the
// tools whose behaviour testCalls gives.
func testTools() *ToolSet {
	tools := []Tool{
		{
			Name: "t_echo", Title: "Echo", Description: "Echoes.",
			InputSchema:  jsontext.Value(`{"type": "object",` + "\n" + `"properties": {"x": {"type": "string"}}}`),
			OutputSchema: jsontext.Value(`{"type":"object"}`),
			Annotations:  &ToolAnnotations{ReadOnlyHint: yes()},
		},
		{Name: "t_plain", Description: "Plain.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	}
	for _, name := range []string{"t_wait", "t_slow", "t_panic", "t_log"} {
		tools = append(tools, Tool{Name: name, InputSchema: jsontext.Value(`{"type":"object"}`)})
	}
	return NewToolSet(tools)
}

// echo returns the arguments as text and as structured content.
func echo(_ context.Context, _ *Call, req *CallToolRequest) (*CallToolResult, error) {
	args := string(req.Arguments)
	if args == "" {
		args = "{}"
	}
	return &CallToolResult{Content: []Content{{Type: "text", Text: args}}, StructuredContent: jsontext.Value(args)}, nil
}

// testCalls are the tools of testTools that do more than echo.
var testCalls = map[string]func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error){
	// t_wait waits until the call is cancelled.
	"t_wait": func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
		<-ctx.Done()
		return TextResult("cancelled", true), nil
	},
	// t_slow takes 12 s (of the test's clock), or as many as its argument
	// "s" says, or until cancelled.
	"t_slow": func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
		var args struct{ S int }
		args.S = 12
		_ = json.Unmarshal(req.Arguments, &args, json.MatchCaseInsensitiveNames(true))
		select {
		case <-time.After(time.Duration(args.S) * time.Second):
			return TextResult("done", false), nil
		case <-ctx.Done():
			return TextResult("cancelled", true), nil
		}
	},
	"t_panic": func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error) { panic("boom") },
	"t_log": func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
		call.Log(LevelDebug, "bridge", "debug detail")
		call.Log(LevelWarning, "bridge", "backend slow")
		return TextResult("ok", false), nil
	},
	// The tools of taskTools.
	"t_job":      taskJob,
	"t_must":     taskJob,
	"t_ask":      taskAsk,
	"t_progress": taskProgress,
	"t_quick": func(context.Context, *Call, *CallToolRequest) (*CallToolResult, error) {
		return TextResult("quick", false), nil
	},
	"t_fail": func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
		sleepOr(ctx, 2*time.Second)
		return TextResult("The backend returned error -32011: Permission denied", true), nil
	},
	// t_big returns 64 KiB after 2 s.
	"t_big": func(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
		sleepOr(ctx, 2*time.Second)
		return TextResult(strings.Repeat("x", 64<<10), false), nil
	},
}

// taskTools are tools whose calls may run as tasks, for the transcripts
// that set Tasks, and their behaviour, in testCalls.
func taskTools() []Tool {
	var tools []Tool
	for _, tt := range []struct {
		name    string
		support TaskSupport
	}{
		{"t_job", TaskOptional}, {"t_must", TaskRequired}, {"t_quick", TaskOptional}, {"t_ask", TaskOptional},
		{"t_progress", TaskOptional}, {"t_fail", TaskOptional}, {"t_big", TaskOptional},
	} {
		tools = append(tools, Tool{Name: tt.name, InputSchema: jsontext.Value(`{"type":"object"}`), Execution: &ToolExecution{TaskSupport: tt.support}})
	}
	return tools
}

// sleepOr waits d, or until ctx ends, and reports whether d passed.
func sleepOr(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// taskJob sleeps as many seconds as its argument "s" says (3 without
// one), or until cancelled, and says how long it slept.
func taskJob(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
	var args struct{ S int }
	args.S = 3
	_ = json.Unmarshal(req.Arguments, &args, json.MatchCaseInsensitiveNames(true))
	if !sleepOr(ctx, time.Duration(args.S)*time.Second) {
		return TextResult("cancelled", true), nil
	}
	return JSONResult(jsontext.Value(fmt.Sprintf(`{"slept":%d}`, args.S))), nil
}

// taskAsk works 2 s, then asks the user for a name, and greets it.
func taskAsk(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
	if !sleepOr(ctx, 2*time.Second) {
		return TextResult("cancelled", true), nil
	}
	a, err := call.Elicit(ctx, "name", jsontext.Value(`{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`))
	if err != nil {
		return TextResult("not asked: "+err.Error(), true), nil
	}
	var r struct {
		Content struct{ Name string } `json:"content"`
	}
	_ = json.Unmarshal(a, &r, json.MatchCaseInsensitiveNames(true))
	return TextResult("Hello, "+r.Content.Name+"!", false), nil
}

// taskProgress reports progress at once, then works 3 s.
func taskProgress(ctx context.Context, call *Call, req *CallToolRequest) (*CallToolResult, error) {
	call.Progress(1, 3, "1 of 3 notes")
	if !sleepOr(ctx, 3*time.Second) {
		return TextResult("cancelled", true), nil
	}
	return TextResult("imported", false), nil
}

func newTestServer(tools *fakeTools) *Server {
	if tools == nil {
		tools = &fakeTools{set: testTools(), calls: testCalls}
	}
	return &Server{
		Info:        Implementation{Name: "tairseach-mcp", Title: "Tairseach", Version: "1.2.3"},
		Tools:       tools,
		ListChanged: true,
	}
}

// testSession drives one Serve call through pipes, like a client on
// stdio. It must run in a synctest bubble: step waits until the server
// has done all it can with what it was sent. Every line the server
// writes is checked against the MCP schema of its version.
type testSession struct {
	t       *testing.T
	in      *io.PipeWriter
	served  chan error
	out     chan struct{} // closed when the server's output has ended
	checker *protocoltest.Checker

	mu    sync.Mutex
	lines []string // written by the server, not yet taken
}

func startSession(t *testing.T, ctx context.Context, srv *Server, version string) *testSession {
	return startSessionTo(t, ctx, srv, version, nil)
}

// startSessionTo is startSession with the server writing to what wrap
// makes of the client's end of the pipe.
func startSessionTo(t *testing.T, ctx context.Context, srv *Server, version string, wrap func(io.Writer) io.Writer) *testSession {
	t.Helper()
	return startSessionWith(t, ctx, srv, version, wrap, SessionOptions{})
}

// startSessionWith is startSessionTo with the session's options: the
// server runs ServeSession.
func startSessionWith(t *testing.T, ctx context.Context, srv *Server, version string, wrap func(io.Writer) io.Writer, o SessionOptions) *testSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &testSession{t: t, in: inW, served: make(chan error, 1), out: make(chan struct{}), checker: protocoltest.NewChecker(version)}
	var w io.Writer = outW
	if wrap != nil {
		w = wrap(outW)
	}
	// Serve runs until the test closes stdin; the test waits via served.
	go func() {
		err := srv.ServeSession(ctx, inR, w, o)
		outW.Close()
		s.served <- err
	}()
	// The reader runs until the server's output ends.
	go func() {
		defer close(s.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, sc.Text())
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

// send writes one line; it returns once the server has read it.
func (s *testSession) send(line string) {
	s.t.Helper()
	s.checker.ClientLine([]byte(line))
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write to server: %v", err)
	}
}

// step waits until the server can do no more, and returns what it wrote
// meanwhile.
func (s *testSession) step() []string {
	s.t.Helper()
	synctest.Wait()
	return s.take()
}

func (s *testSession) take() []string {
	s.t.Helper()
	s.mu.Lock()
	lines := s.lines
	s.lines = nil
	s.mu.Unlock()
	for _, l := range lines {
		if err := s.checker.ServerLine([]byte(l)); err != nil {
			s.t.Errorf("invalid message %.300s\n  %v", l, err)
		}
	}
	return lines
}

// exchange sends line and returns what the server wrote in answer.
func (s *testSession) exchange(line string) []string {
	s.t.Helper()
	s.send(line)
	return s.step()
}

// expect sends line and checks the server's answer, line by line.
func (s *testSession) expect(line string, want ...string) {
	s.t.Helper()
	got := s.exchange(line)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		s.t.Errorf("after %.200s\ngot:\n%s\nwant:\n%s", line, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// close ends stdin and returns Serve's error and what the server wrote
// until its output ended.
func (s *testSession) close() ([]string, error) {
	s.t.Helper()
	s.in.Close()
	err := <-s.served
	<-s.out
	return s.take(), err
}

func initLine(id int, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`, id, version)
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func modernReq(id, method, params string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + modernMeta + `}}`
}
