package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// status is the outcome of one check.
type status string

const (
	statusOK   status = "ok"
	statusWarn status = "warn"
	statusFail status = "fail"
	statusInfo status = "info"
)

var glyphs = map[status]string{statusOK: "✓", statusWarn: "!", statusFail: "✗", statusInfo: "-"}

// result is one line of doctor's report.
type result struct {
	Name    string `json:"name"`
	Status  status `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitzero"`
}

// Limits of common clients the tool list is held against.
const (
	cursorTools   = 40  // Cursor sends the model only the first 40 tools
	cursorLoses   = 80  // past this, Cursor loses more of the list than it uses
	openAITools   = 128 // OpenAI's API refuses a request with more tools
	contextTokens = 200_000
	listShare     = 10 // percent of contextTokens a tool list may take
)

// doctorOptions are doctor's flags and what it starts for the purity check.
type doctorOptions struct {
	asJSON bool
	name   string   // the bridge's entry in clients' files
	exe    string   // the binary to start as a client would: this one
	args   []string // its flags: this run's effective ones
}

func newDoctorCmd(e *env, opts *options) *cobra.Command {
	d := doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the setup: backend socket, manifests, tool list, client configs, stdout",
		Long: `doctor checks what a working setup needs, one line each (✓ ok, ! warning, ✗ failure,
- information) with the fix to apply: the backend's socket, the manifest folders, the
client-visible tool names, the size of the tool list against the limits of common
clients, the bridge's entry in each MCP client found on this machine, and that stdout
carries nothing but MCP messages (it starts this binary with the same flags, as a
client would, and runs a short session). The exit status is 1 when a check fails.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := executable()
			if err != nil {
				return err
			}
			home, _ := os.UserHomeDir()
			d.exe, d.args = exe, serverArgs(cmd.InheritedFlags(), home)
			return runDoctor(cmd.Context(), e, opts, d)
		},
	}
	cmd.Flags().BoolVar(&d.asJSON, "json", false, "print the checks as JSON")
	cmd.Flags().StringVar(&d.name, "name", "tairseach", "name of the bridge's entry in clients' files")
	return cmd
}

func runDoctor(ctx context.Context, e *env, opts *options, d doctorOptions) error {
	snap := newRegistry(opts, nil, nil, nil).Snapshot()
	tr := runSession(ctx, d.exe, d.args, nil)
	rs := []result{checkSocket(ctx, opts)}
	rs = append(rs, checkManifests(opts.manifests, snap)...)
	rs = append(rs, checkNames(opts.prefix, snap.Entries))
	rs = append(rs, checkToolList(tr.response("tools/list"))...)
	m, err := newMachine(e)
	if err != nil {
		rs = append(rs, result{"clients", statusFail, err.Error(), "set it to your home folder"})
	} else {
		rs = append(rs, checkClients(m, d.exe, d.name)...)
	}
	rs = append(rs, checkSession(tr))
	failed := false
	for i, r := range rs {
		rs[i].Message, rs[i].Fix = printable(r.Message), printable(r.Fix)
		failed = failed || r.Status == statusFail
	}
	if d.asJSON {
		if err := writeJSON(e.stdout, rs); err != nil {
			return err
		}
	} else {
		printResults(e.stdout, rs)
	}
	if failed {
		return exitStatus(exitError)
	}
	return nil
}

func printResults(w io.Writer, rs []result) {
	width := 0
	count := map[status]int{}
	for _, r := range rs {
		width = max(width, len(r.Name))
		count[r.Status]++
	}
	for _, r := range rs {
		fmt.Fprintf(w, "%s %-*s  %s\n", glyphs[r.Status], width, r.Name, r.Message)
		if r.Fix != "" {
			fmt.Fprintf(w, "  %*s  fix: %s\n", width, "", r.Fix)
		}
	}
	fmt.Fprintf(w, "%s: %s, %s\n", plural(len(rs), "check"), plural(count[statusFail], "failure"), plural(count[statusWarn], "warning"))
}

// checkSocket connects to the backend as the server would, and picks the
// fix by what stopped it. When that fails for a socket that accepts
// connections from anyone, the failure was a check of who owns the
// socket or runs the backend.
func checkSocket(ctx context.Context, opts *options) result {
	r := result{Name: "socket"}
	check := func(o *options) error { // bounded by the client's dial timeout
		c := newBackend(o, nil)
		defer c.Close()
		return c.Check(ctx)
	}
	err := check(opts)
	var pathErr *socketclient.SocketPathError
	switch {
	case err == nil && opts.allowAnyPeer:
		return r.ok(opts.socket + ": the backend accepts connections (owner and process not checked: --allow-any-peer)")
	case err == nil:
		return r.ok(opts.socket + ": the backend accepts connections; the socket and the process behind it are yours")
	case errors.As(err, &pathErr) && errors.Is(err, fs.ErrNotExist):
		return r.fail(opts.socket+": "+pathErr.Error(), "start the backend, or point --socket (or TAIRSEACH_SOCKET) at its socket")
	case errors.As(err, &pathErr):
		return r.fail(opts.socket+": "+pathErr.Error(), "point --socket (or TAIRSEACH_SOCKET) at the backend's socket")
	case errors.Is(err, socketclient.ErrBusy):
		return r.fail(err.Error(), "the backend is overloaded or hung: see its log, or restart it")
	}
	anyPeer := *opts
	anyPeer.allowAnyPeer = true
	if !opts.allowAnyPeer && check(&anyPeer) == nil {
		return r.fail(err.Error(), "run the backend as yourself; --allow-any-peer skips this check, only if you trust that user")
	}
	return r.fail(err.Error(), "start (or restart) the backend: nothing accepts connections on this socket")
}

// ok, info, warn and fail give the check named r its outcome.
func (r result) ok(msg string) result        { return result{r.Name, statusOK, msg, ""} }
func (r result) info(msg, fix string) result { return result{r.Name, statusInfo, msg, fix} }
func (r result) warn(msg, fix string) result { return result{r.Name, statusWarn, msg, fix} }
func (r result) fail(msg, fix string) result { return result{r.Name, statusFail, msg, fix} }

// checkManifests reports missing folders and the manifests' problems by
// severity.
func checkManifests(dirs []string, snap *registry.Snapshot) []result {
	var rs []result
	r := result{Name: "manifests"}
	missing := map[string]bool{}
	for _, d := range dirs {
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			missing[d] = true
			rs = append(rs, r.fail(d+" does not exist", "create it, or point --manifests (or TAIRSEACH_MANIFESTS) at the folder that holds your manifests"))
		}
	}
	var errs, warns int
	for _, p := range snap.Problems {
		switch {
		case missing[p.File]: // said above
		case p.Severity == manifest.Error:
			errs++
		default:
			warns++
		}
	}
	msg := fmt.Sprintf("%s served from %s; %s, %s", plural(len(snap.Entries), "tool"), joinPaths(dirs), plural(errs, "error"), plural(warns, "warning"))
	switch {
	case len(snap.Entries) == 0:
		return append(rs, r.fail(msg, "add manifests (see docs/manifests.md), or point --manifests at the folder that holds them"))
	case errs > 0:
		return append(rs, r.fail(msg, "run 'tairseach-mcp validate' for the list: the tools or files with errors are not served"))
	case warns > 0:
		return append(rs, r.warn(msg, "run 'tairseach-mcp validate' for the list"))
	}
	return append(rs, r.ok(msg))
}

// checkNames checks that the mapping to client-safe names held: Claude
// Desktop refuses a whole server when one name is invalid.
func checkNames(prefix string, entries []*registry.Entry) result {
	var renamed int
	var invalid []string
	for _, en := range entries {
		if _, changed := registry.ClientName(prefix, en.Tool.Name); changed {
			renamed++
		}
		if !registry.ValidName(en.Name) {
			invalid = append(invalid, strconv.Quote(en.Name))
		}
	}
	r := result{Name: "tool names"}
	if len(invalid) > 0 {
		return r.fail(fmt.Sprintf("%s invalid for Claude Desktop (^[a-zA-Z0-9_-]{1,64}$), which then refuses every tool: %s", plural(len(invalid), "name"), strings.Join(invalid, ", ")),
			"this is a bug in tairseach-mcp's name mapping: please report it")
	}
	return r.ok(fmt.Sprintf("all %d valid for Claude Desktop; %d renamed to fit", len(entries), renamed))
}

// checkToolList holds the tools/list response a client received against
// the limits of common clients: the number of tools, and their share of
// a model's context.
func checkToolList(line []byte) []result {
	var resp struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if line == nil || json.Unmarshal(line, &resp) != nil {
		return []result{{"tool list", statusInfo, "not measured: the bridge did not answer tools/list (see stdout)", ""}}
	}
	tools := resp.Result.Tools
	n, page := len(tools), ""
	if resp.Result.NextCursor != "" {
		page = " on the first page alone"
	}
	narrow := "serve fewer tools: --tool-mode search lists two instead of all, or --include/--exclude/--read-only narrow them (docs/tools.md)"
	count := result{"tool count", statusOK, fmt.Sprintf("%d%s: within Cursor's %d and OpenAI's %d", n, page, cursorTools, openAITools), ""}
	switch {
	case n > openAITools:
		count = count.warn(fmt.Sprintf("%d%s: OpenAI's API refuses more than %d tools in a request, and Cursor uses only the first %d", n, page, openAITools, cursorTools), narrow)
	case n > cursorLoses:
		count = count.warn(fmt.Sprintf("%d: Cursor uses only the first %d; the other %d, from %s on, are lost to it", n, cursorTools, n-cursorTools, tools[cursorTools].Name), narrow)
	case n > cursorTools:
		count = count.warn(fmt.Sprintf("%d: Cursor uses only the first %d", n, cursorTools), narrow)
	}
	tokens := estimateTokens(string(line))
	limit := contextTokens * listShare / 100
	size := result{"tool list", statusOK, fmt.Sprintf("%d bytes%s, about %d tokens: %.1f%% of a %dk-token context", len(line), page, tokens, 100*float64(tokens)/contextTokens, contextTokens/1000), ""}
	if tokens > limit {
		size = size.warn(size.Message+fmt.Sprintf(", more than the %d%% (%d tokens) a tool list should take", listShare, limit), narrow)
	}
	return []result{count, size}
}

// checkClients checks the bridge's entry in each client found here.
func checkClients(m machine, exe, name string) []result {
	var rs []result
	for _, c := range mcpClients {
		if c.found(m) {
			rs = append(rs, checkClient(m, c, exe, name))
		}
	}
	if len(rs) == 0 {
		return []result{{"clients", statusInfo, "none found (looked for " + clientNames() + ")", ""}}
	}
	return rs
}

func checkClient(m machine, c mcpClient, exe, name string) result {
	_, path := c.paths(m)
	r := result{Name: c.name}
	f, err := readConfig(c, path)
	if err != nil {
		return r.fail(err.Error(), "") // readConfig says what to do
	}
	v, ok := f.servers.get(name)
	if !ok {
		return r.info(f.path+": the bridge is not installed", "tairseach-mcp install "+c.name)
	}
	reinstall := "tairseach-mcp install " + c.name + " --force, with the flags it should run with"
	var e serverEntry
	if json.Unmarshal(v, &e) != nil || e.Command == "" {
		return r.fail(fmt.Sprintf("%s: %q is not a command entry", f.path, name), reinstall)
	}
	real, err := resolveCommand(e.Command)
	if err != nil {
		return r.fail(fmt.Sprintf("%s: the command %s does not exist", f.path, e.Command), reinstall)
	}
	if err := parseServerArgs(e.Args); err != nil {
		return r.fail(fmt.Sprintf("%s: the bridge would refuse its args: %v", f.path, err), reinstall)
	}
	if real != exe {
		return r.warn(fmt.Sprintf("%s: runs another binary, %s", f.path, e.Command), reinstall+", to run this one ("+exe+")")
	}
	return r.ok(fmt.Sprintf("%s: runs this binary, %s", f.path, plural(len(e.Args), "flag")))
}

// parseServerArgs parses a client's args for the bridge as the server
// would: with a fresh root command, and no environment of ours.
func parseServerArgs(args []string) error {
	root := newRootCmd(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		getenv: func(string) (string, bool) { return "", false }})
	if err := root.ParseFlags(args); err != nil {
		return flagError(root, err)
	}
	if rest := root.Flags().Args(); len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	return root.PersistentPreRunE(root, nil)
}

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
			return r.fail(fmt.Sprintf("line %d %s: %s", n, problem, excerpt(line)), bug)
		}
		answered[id] = true
	}
	if tr.err != nil {
		msg := fmt.Sprintf("the bridge (%s) ended with: %v", tr.cmdline, tr.err)
		if lines := bytes.Split(bytes.TrimSpace(tr.stderr), []byte("\n")); len(lines[len(lines)-1]) > 0 {
			msg += "; its last log line: " + excerpt(lines[len(lines)-1])
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

// excerpt quotes the start of a line.
func excerpt(b []byte) string {
	b = bytes.TrimSuffix(b, []byte("\n"))
	if len(b) > 80 {
		return strconv.Quote(string(b[:80])) + "…"
	}
	return strconv.Quote(string(b))
}
