package cli

// The doctor's check of stdout: it starts the bridge as a client would,
// runs a short session and reads every line the bridge writes.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// session is what the purity check sends, as a client would: the legacy
// handshake Claude Desktop makes, the tool list, a ping, and the probe of
// the modern era (which clients such as the Go SDK send first).
var session = []struct{ id, method, params string }{
	{"1", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tairseach-mcp doctor","version":"1"}}`},
	{"", "notifications/initialized", ""},
	{"2", "tools/list", ""},
	{"3", "ping", ""},
	{`"discover"`, "server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`},
}

// sessionTimeout bounds the whole session, manifest loading included.
const sessionTimeout = 20 * time.Second

// transcript is what the started bridge wrote, and how it ended.
type transcript struct {
	cmdline        string
	stdout, stderr []byte
	err            error
}

// runSession starts exe as a client would, sends the session and closes
// its stdin; the bridge answers and exits.
func runSession(ctx context.Context, exe string, args, env []string) transcript {
	var in strings.Builder
	for _, s := range session {
		in.WriteString(`{"jsonrpc":"2.0"`)
		if s.id != "" {
			in.WriteString(`,"id":` + s.id)
		}
		in.WriteString(`,"method":"` + s.method + `"`)
		if s.params != "" {
			in.WriteString(`,"params":` + s.params)
		}
		in.WriteString("}\n")
	}
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(in.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("no answer within %s", sessionTimeout)
	}
	return transcript{strings.Join(append([]string{exe}, args...), " "), out.Bytes(), errb.Bytes(), err}
}

// message is what the purity check reads of each line.
type message struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  string         `json:"method"`
	Result  jsontext.Value `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// response returns the line that answers the session's request for
// method, or nil.
func (tr transcript) response(method string) []byte {
	for _, s := range session {
		if s.method != method {
			continue
		}
		for line := range bytes.Lines(tr.stdout) {
			var m message
			if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == s.id {
				return bytes.TrimSuffix(line, []byte("\n"))
			}
		}
	}
	return nil
}

// maxQuoted bounds, in bytes, the part of a line a result quotes.
const maxQuoted = 80

// checkSession checks that every line the bridge wrote on stdout is one
// JSON-RPC 2.0 message, and that each request got exactly one response.
func checkSession(tr transcript) result {
	r := result{Name: "stdout"}
	methods := map[string]string{} // id → method of the requests sent
	for _, s := range session {
		if s.id != "" {
			methods[s.id] = s.method
		}
	}
	bug := "stdout must carry only MCP messages: this is a bug in tairseach-mcp, please report it with this line"
	answered := map[string]bool{}
	n := 0
	for line := range bytes.Lines(tr.stdout) {
		n++
		var m message
		err := json.Unmarshal(line, &m)
		var problem string
		id := string(m.ID)
		switch {
		case err != nil || !bytes.HasSuffix(line, []byte("\n")):
			problem = "is not a JSON-RPC message"
		case m.JSONRPC != "2.0":
			problem = `lacks "jsonrpc": "2.0"`
		case m.Method != "": // a notification (or request) from the server
			continue
		case methods[id] == "":
			problem = "answers no request that was sent"
		case (m.Result == nil) == (m.Error == nil):
			problem = "must hold a result or an error, and only one"
		case answered[id]:
			problem = "answers " + methods[id] + " a second time"
		case m.Error != nil:
			return r.fail(fmt.Sprintf("%s was answered with error %d: %s", methods[id], m.Error.Code, m.Error.Message), "run with --log-level debug to see why")
		}
		if problem != "" {
			return r.fail(fmt.Sprintf("line %d %s: %s", n, problem, safetext.Quote(strings.TrimSuffix(string(line), "\n"), maxQuoted)), bug)
		}
		answered[id] = true
	}
	if tr.err != nil {
		msg := fmt.Sprintf("the bridge (%s) ended with: %v", tr.cmdline, tr.err)
		if lines := bytes.Split(bytes.TrimSpace(tr.stderr), []byte("\n")); len(lines[len(lines)-1]) > 0 {
			msg += "; its last log line: " + safetext.Quote(string(lines[len(lines)-1]), maxQuoted)
		}
		return r.fail(msg, "run that command by hand to see what it says")
	}
	for _, s := range session {
		if s.id != "" && !answered[s.id] {
			return r.fail("no response to "+s.method, bug)
		}
	}
	return r.ok(fmt.Sprintf("%s, each one JSON-RPC message; %s answered once each (legacy 2025-11-25 and modern 2026-07-28)", plural(n, "line"), plural(len(methods), "request")))
}
