package mcphttp

// The tests speak HTTP as curl would: requests built by hand, responses
// read as bytes, event streams parsed line by line. Every JSON-RPC
// message the handler writes, as a body or as an event, is checked
// against the official schema of the protocol version in force.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
)

// fakeTools is a ToolProvider whose tools let a test see and steer each
// call:
//
//	echo  answers its arguments as text
//	wait  waits until cancelled; says "started" and "cancelled"
//	gate  waits until release is closed, or until cancelled
//	job   gate's, as a task when the client can take one
//	log   sends a log message about the call, then answers
//	big   answers with n bytes of text (argument "n"), after a log
//	      message when "log" is true
type fakeTools struct {
	started   chan string   // the tool's name as each wait or gate call starts
	cancelled chan string   // the tool's name as each wait or gate call sees its cancellation
	release   chan struct{} // closed: gate calls answer
	once      sync.Once
}

func newTools() *fakeTools {
	return &fakeTools{started: make(chan string, 64), cancelled: make(chan string, 64), release: make(chan struct{})}
}

var toolSet = protocol.NewToolSet([]protocol.Tool{
	{Name: "echo", Description: "Echoes its arguments.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "wait", Description: "Waits until cancelled.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "gate", Description: "Waits for the test.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "log", Description: "Logs, then answers.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "big", Description: "Answers n bytes.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "naïve", Description: "A name that is not ASCII.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "who", Description: "Answers its call's principal.", InputSchema: jsontext.Value(`{"type":"object"}`)},
	{Name: "job", Description: "Waits for the test, as a task when it can.", InputSchema: jsontext.Value(`{"type":"object"}`),
		Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskOptional}},
	{Name: "askjob", Description: "Asks the user a name once the test says, as a task when it can, and answers it.", InputSchema: jsontext.Value(`{"type":"object"}`),
		Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskOptional}},
})

func (f *fakeTools) Tools() *protocol.ToolSet { return toolSet }

func (f *fakeTools) open() { f.once.Do(func() { close(f.release) }) }

func (f *fakeTools) CallTool(ctx context.Context, call *protocol.Call, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	switch req.Name {
	case "echo", "naïve":
		return protocol.TextResult(string(req.Arguments), false), nil
	case "wait":
		f.started <- req.Name
		<-ctx.Done()
		f.cancelled <- req.Name
		return protocol.TextResult("cancelled", true), nil
	case "gate", "job":
		f.started <- req.Name
		select {
		case <-f.release:
			return protocol.TextResult("released", false), nil
		case <-ctx.Done():
			f.cancelled <- req.Name
			return protocol.TextResult("cancelled", true), nil
		}
	case "who":
		return protocol.TextResult(call.Principal().String(), false), nil
	case "askjob":
		f.started <- req.Name
		select { // once the test says: by then a task
		case <-f.release:
		case <-ctx.Done():
			return protocol.TextResult("cancelled", true), nil
		}
		res, err := call.Elicit(ctx, "name", jsontext.Value(`{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`))
		if err != nil {
			return protocol.TextResult(err.Error(), true), nil
		}
		return protocol.TextResult(string(res), false), nil
	case "log":
		call.Log(protocol.LevelWarning, "test", "about to answer")
		return protocol.TextResult("logged", false), nil
	case "big":
		var args struct {
			N   int
			Log bool
		}
		_ = json.Unmarshal(req.Arguments, &args, json.MatchCaseInsensitiveNames(true))
		if args.Log {
			call.Log(protocol.LevelWarning, "test", "a large answer comes")
		}
		return protocol.TextResult(strings.Repeat("x", args.N), false), nil
	}
	return nil, fmt.Errorf("%w: unknown tool %q", protocol.ErrInvalidParams, req.Name)
}

// bridge is a Handler serving a protocol.Server on a loopback port.
type bridge struct {
	t     *testing.T
	srv   *protocol.Server
	h     *Handler
	ts    *httptest.Server
	tools *fakeTools
	url   string
	hc    *http.Client
	// timeout bounds each request read whole (none in a bubble, where
	// the clock is the test's)
	timeout time.Duration
	// closed receives as each connection closes: the handler of its
	// last request has returned.
	closed chan struct{}
}

// newBridge starts a handler with opts (and srv's fields as set by
// edit, when given) on a loopback port; the test's end shuts it down.
func newBridge(t *testing.T, opts Options, edit func(*protocol.Server)) *bridge {
	t.Helper()
	return newBridgeOn(t, opts, edit, nil)
}

// newBridgeOn is newBridge on a listener that wrap, when given, wraps.
func newBridgeOn(t *testing.T, opts Options, edit func(*protocol.Server), wrap func(net.Listener) net.Listener) *bridge {
	t.Helper()
	tools := newTools()
	srv := &protocol.Server{
		Info:             protocol.Implementation{Name: "tairseach-mcp", Version: "1.2.3"},
		Tools:            tools,
		ListChanged:      true,
		ProgressInterval: -1,
	}
	if edit != nil {
		edit(srv)
	}
	h := NewHandler(srv, opts)
	ts := httptest.NewUnstartedServer(h)
	closed := make(chan struct{}, 1024)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	h.CountConnections(ts.Config)
	if wrap != nil {
		ts.Listener = wrap(ts.Listener)
	}
	ts.Start()
	b := &bridge{t: t, srv: srv, h: h, ts: ts, tools: tools, url: ts.URL + Path, hc: ts.Client(), timeout: 10 * time.Second, closed: closed}
	t.Cleanup(func() {
		tools.open()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
	})
	return b
}

// client is one client of a bridge: its session, when it has one, and
// the checker of what the bridge sends it.
type client struct {
	b       *bridge
	t       *testing.T
	hc      *http.Client
	check   *protocoltest.Checker
	version string // sent as MCP-Protocol-Version once initialized
	session string // Mcp-Session-Id once initialized
	token   string // sent as a bearer token when set
}

// modern returns a client of the stateless era.
func (b *bridge) modern(t *testing.T) *client {
	return &client{b: b, t: t, hc: b.hc, check: protocoltest.NewChecker(protocol.ModernVersion)}
}

// legacy returns a client that has initialized a session at version.
func (b *bridge) legacy(t *testing.T, version string) *client {
	t.Helper()
	c := &client{b: b, t: t, hc: b.hc, check: protocoltest.NewChecker(version)}
	c.initialize(version)
	return c
}

func (c *client) initialize(version string) {
	c.t.Helper()
	r := c.post(initialize(1, version))
	if r.status != http.StatusOK {
		c.t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	c.session, c.version = r.header.Get("Mcp-Session-Id"), version
	if c.session == "" {
		c.t.Fatal("initialize answered without an Mcp-Session-Id")
	}
	if r := c.post(notification("notifications/initialized", "")); r.status != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: %d %s", r.status, r.body)
	}
}

// reply is a response read whole: its body, or the data of its events.
type reply struct {
	status int
	header http.Header
	close  bool     // the bridge closes the connection after it
	body   []byte   // a JSON body, or the raw event stream
	events []string // the data of each event of an event stream
}

// errorCode returns the JSON-RPC error code of a JSON reply, or 0.
func (r *reply) errorCode() int64 {
	var resp struct {
		Error *struct{ Code int64 } `json:"error"`
	}
	if json.Unmarshal(r.body, &resp, json.MatchCaseInsensitiveNames(true)) != nil || resp.Error == nil {
		return 0
	}
	return resp.Error.Code
}

// id returns the id of the reply, a JSON body, as it is written; "" when
// it has none.
func (r *reply) id() string {
	var resp struct {
		ID jsontext.Value `json:"id"`
	}
	if json.Unmarshal(r.body, &resp, json.RejectUnknownMembers(false)) != nil {
		return ""
	}
	return string(resp.ID)
}

// headers are the headers of a request: a name with an empty value is
// left out.
type headers map[string]string

// request builds a request to the bridge with the client's headers,
// changed by extra.
func (c *client) request(ctx context.Context, method, body string, extra headers) *http.Request {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.b.url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	h := headers{"Accept": "application/json, text/event-stream"}
	if method == http.MethodGet {
		h["Accept"] = "text/event-stream"
	}
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	if c.session != "" {
		h["Mcp-Session-Id"] = c.session
	}
	if c.version != "" {
		h["MCP-Protocol-Version"] = c.version
	}
	if c.token != "" {
		h["Authorization"] = "Bearer " + c.token
	}
	for k, v := range modernHeaders(body) {
		h[k] = v
	}
	for k, v := range extra {
		h[k] = v
	}
	for k, v := range h {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	return req
}

// modernHeaders returns the headers that mirror a modern request's body.
func modernHeaders(body string) headers {
	env, err := protocol.Inspect([]byte(body))
	if err != nil || !protocol.IsModernVersion(env.ProtocolVersion) {
		return nil
	}
	h := headers{"MCP-Protocol-Version": env.ProtocolVersion, "Mcp-Method": env.Method}
	if env.Name != "" {
		h["Mcp-Name"] = env.Name
	}
	return h
}

// post sends body and reads the whole reply.
func (c *client) post(body string, extra ...headers) *reply {
	c.t.Helper()
	return c.do(http.MethodPost, body, extra...)
}

// do sends a request and reads the whole reply, checking every message.
func (c *client) do(method, body string, extra ...headers) *reply {
	c.t.Helper()
	var h headers
	if len(extra) > 0 {
		h = extra[0]
	}
	if body != "" {
		c.check.ClientLine([]byte(body))
	}
	return c.send(c.request(c.t.Context(), method, body, h))
}

// send sends req and reads the whole reply, checking every message.
func (c *client) send(req *http.Request) *reply {
	c.t.Helper()
	method := req.Method
	if c.b.timeout > 0 {
		ctx, cancel := context.WithTimeout(req.Context(), c.b.timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s: reading the reply: %v", method, err)
	}
	r := &reply{status: resp.StatusCode, header: resp.Header, close: resp.Close, body: data}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		c.checkMessage(data, resp.StatusCode)
	case "text/event-stream":
		es := newEvents(bytes.NewReader(data))
		for {
			ev, err := es.next()
			if err != nil {
				break
			}
			c.checkMessage([]byte(ev), resp.StatusCode)
			r.events = append(r.events, ev)
		}
	case "":
		if len(data) > 0 {
			c.t.Errorf("%s: a body without a Content-Type: %q", method, data)
		}
	default:
		c.t.Errorf("%s: Content-Type %q", method, resp.Header.Get("Content-Type"))
	}
	return r
}

// checkMessage checks one message the bridge sent. An error that no
// request's id names is the transport's refusal: it is checked against
// the schema of the transport's version.
func (c *client) checkMessage(msg []byte, status int) {
	c.t.Helper()
	var env struct {
		ID jsontext.Value `json:"id"`
	}
	check := c.check
	if json.Unmarshal(msg, &env) == nil && status != http.StatusOK && (env.ID == nil || string(env.ID) == "null") {
		// The transport says such a reply "has no id": null is no
		// request id either, and no schema from 2025-11-25 on allows it.
		if env.ID != nil {
			c.t.Errorf("a refusal with an id of null: %s", msg)
		}
		check = protocoltest.NewChecker(protocol.Version20251125)
		if c.version == "" || protocol.IsModernVersion(c.version) {
			check = protocoltest.NewChecker(protocol.ModernVersion)
		}
	}
	if err := check.ServerLine(msg); err != nil {
		c.t.Errorf("invalid message %.300s\n  %v", msg, err)
	}
}

// eventStream is a response read as it comes: an event stream.
type eventStream struct {
	c    *client
	resp *http.Response
	ev   *events
	stop context.CancelFunc // closes the stream
}

// open sends a request whose reply is an event stream and returns once
// its headers are in.
func (c *client) open(method, body string, extra ...headers) *eventStream {
	c.t.Helper()
	var h headers
	if len(extra) > 0 {
		h = extra[0]
	}
	if body != "" {
		c.check.ClientLine([]byte(body))
	}
	ctx, cancel := context.WithCancel(c.t.Context())
	resp, err := c.hc.Do(c.request(ctx, method, body, h))
	if err != nil {
		cancel()
		c.t.Fatalf("%s: %v", method, err)
	}
	s := &eventStream{c: c, resp: resp, ev: newEvents(resp.Body), stop: func() { cancel(); resp.Body.Close() }}
	c.t.Cleanup(s.stop)
	if ct := mediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("%s: %d %s, not an event stream: %s", method, resp.StatusCode, ct, body)
	}
	return s
}

// next returns the data of the stream's next event, checked.
func (s *eventStream) next() string {
	s.c.t.Helper()
	ev, err := s.ev.next()
	if err != nil {
		s.c.t.Fatalf("the event stream ended: %v", err)
	}
	s.c.checkMessage([]byte(ev), http.StatusOK)
	return ev
}

// end reads the rest of the stream and returns the data of its events,
// checked, once the bridge ends it.
func (s *eventStream) end() []string {
	s.c.t.Helper()
	var out []string
	for {
		ev, err := s.ev.next()
		if err != nil {
			return out
		}
		s.c.checkMessage([]byte(ev), http.StatusOK)
		out = append(out, ev)
	}
}

// events parses an event stream: each event's data, comments skipped.
type events struct {
	br       *bufio.Reader
	comments int // keep-alive comments seen
}

func newEvents(r io.Reader) *events { return &events{br: bufio.NewReader(r)} }

func (e *events) next() (string, error) {
	var data []string
	for {
		line, err := e.br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && data != nil:
			return strings.Join(data, "\n"), nil
		case line == "":
		case strings.HasPrefix(line, ":"):
			e.comments++
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// Messages, as a client writes them.

func request(id int, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func notification(method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
}

func initialize(id int, version string) string {
	return request(id, "initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`, version))
}

func call(id int, tool, args string) string {
	return request(id, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// modern is a request of the stateless era: params (an object's members,
// without braces) with the _meta every request carries.
func modern(id int, method, params string) string {
	if params != "" {
		params += ","
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, params, modernMeta)
}

// waitFor receives from ch, failing the test after 10 s.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}
