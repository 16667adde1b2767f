package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
)

// fakeTools is a ToolProvider whose calls run a test's function.
type fakeTools struct {
	mu   sync.Mutex
	set  *ToolSet
	call func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)
}

func (f *fakeTools) Tools() *ToolSet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.set
}

func (f *fakeTools) CallTool(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
	if _, ok := f.Tools().Lookup(req.Name); !ok {
		return nil, ErrInvalidParams
	}
	return f.call(ctx, req)
}

func yes() *bool { b := true; return &b }

// testTools has one tool with every optional field, and one plain tool.
func testTools() *ToolSet {
	return NewToolSet([]Tool{
		{
			Name: "t_echo", Title: "Echo", Description: "Echoes.",
			InputSchema:  json.RawMessage(`{"type": "object",` + "\n" + `"properties": {"x": {"type": "string"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations:  &ToolAnnotations{ReadOnlyHint: yes()},
		},
		{Name: "t_plain", Description: "Plain.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
}

func echoCall(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
	args := string(req.Arguments)
	if args == "" {
		args = "{}"
	}
	return &CallToolResult{Content: []Content{{Type: "text", Text: args}}, StructuredContent: json.RawMessage(args)}, nil
}

func newTestServer(tools *fakeTools) *Server {
	if tools == nil {
		tools = &fakeTools{set: testTools(), call: echoCall}
	}
	return &Server{
		Info:        Implementation{Name: "tairseach-mcp", Title: "Tairseach", Version: "1.2.3"},
		Tools:       tools,
		ListChanged: true,
	}
}

// testClient drives one Serve call through pipes, like a client on stdio.
// Every line the server writes is checked against the MCP schema of the
// version in force.
type testClient struct {
	t       *testing.T
	in      *io.PipeWriter
	lines   chan string
	served  chan error
	checker *protocoltest.Checker
}

func startClient(t *testing.T, srv *Server, version string) *testClient {
	return startClientCtx(t, t.Context(), srv, version)
}

func startClientCtx(t *testing.T, ctx context.Context, srv *Server, version string) *testClient {
	t.Helper()
	protocoltest.RequireSchemas(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &testClient{t: t, in: inW, lines: make(chan string, 1024), served: make(chan error, 1), checker: protocoltest.NewChecker(version)}
	// Serve runs until the test closes stdin; the test waits via served.
	go func() {
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		c.served <- err
	}()
	// The reader runs until the server closes its output.
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *testClient) send(line string) {
	c.t.Helper()
	c.checker.ClientLine([]byte(line))
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("write to server: %v", err)
	}
}

// recv returns the next line the server wrote, checked against the schema.
func (c *testClient) recv() string {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("server closed its output")
		}
		if err := c.checker.ServerLine([]byte(line)); err != nil {
			c.t.Errorf("invalid message %s\n  %v", line, err)
		}
		return line
	case <-time.After(10 * time.Second):
		c.t.Fatal("no message from the server within 10s")
		return ""
	}
}

// expect receives one line and compares it as JSON with want.
func (c *testClient) expect(want string) {
	c.t.Helper()
	got := c.recv()
	if d := jsonDiff(want, got); d != "" {
		c.t.Errorf("unexpected message (-want +got):\n%s\ngot: %s", d, got)
	}
}

// close ends stdin and returns Serve's error, after checking that the
// server wrote nothing more.
func (c *testClient) close() error {
	c.t.Helper()
	c.in.Close()
	var err error
	select {
	case err = <-c.served:
	case <-time.After(10 * time.Second):
		c.t.Fatal("Serve did not return within 10s of EOF")
	}
	for line := range c.lines {
		c.t.Errorf("unexpected message after the last expected one: %s", line)
	}
	return err
}

func jsonDiff(want, got string) string {
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return "bad want: " + err.Error()
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return "bad JSON: " + err.Error()
	}
	return cmp.Diff(w, g)
}

func initLine(id int, version string) string {
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`
}

func itoa(n int) string { return strings.TrimSpace(string(appendInt(nil, int64(n)))) }
