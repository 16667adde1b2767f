package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// childVar makes the test binary stand in for the bridge that doctor
// starts: "serve" runs the command line, "junk" prints a line on stdout
// first, "mute" reads stdin and answers nothing.
const childVar = "TAIRSEACH_DOCTOR_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childVar) {
	case "":
		os.Exit(m.Run())
	case "junk":
		fmt.Println("starting up")
	case "mute":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(Main())
}

// check is what a test compares of a result: its status and words its
// message and fix must hold.
type check struct {
	status   status
	msg, fix string
}

func assertResult(t *testing.T, r result, want check) {
	t.Helper()
	if r.Status != want.status || !strings.Contains(r.Message, want.msg) || !strings.Contains(r.Fix, want.fix) {
		t.Errorf("got %s %q (fix %q), want %s with %q (fix with %q)", r.Status, r.Message, r.Fix, want.status, want.msg, want.fix)
	}
}

// shortDir is a temporary folder short enough for a socket path.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "doc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestDoctorChecksTheSocket(t *testing.T) {
	dir := shortDir(t)
	file := filepath.Join(dir, "file.sock")
	writeFile(t, file, "", 0o600)
	fifo := filepath.Join(dir, "fifo.sock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	live := sockettest.NewServer(t, sockettest.Echo).Path

	tests := []struct {
		name      string
		path      string
		anyPeer   bool
		asAnother bool
		want      check
	}{
		{"a missing socket", filepath.Join(dir, "none.sock"), false, false, check{statusFail, "no socket there", "start the backend"}},
		{"a regular file", file, false, false, check{statusFail, file + ": a regular file, not a socket", "point --socket"}},
		{"a folder", dir, false, false, check{statusFail, dir + ": a folder, not a socket", "point --socket"}},
		{"a named pipe", fifo, false, false, check{statusFail, fifo + ": a named pipe, not a socket", "point --socket"}},
		{"a device", os.DevNull, false, false, check{statusFail, os.DevNull + ": a device, not a socket", "point --socket"}},
		{"a socket nothing listens on", stale, false, false, check{statusFail, "refused", "start (or restart) the backend"}},
		{"a backend that accepts connections", live, false, false, check{statusOK, "the socket and the process behind it are yours", ""}},
		{"with --allow-any-peer", live, true, false, check{statusOK, "not checked: --allow-any-peer", ""}},
		{"a socket of another user", "", false, true, check{statusFail, "owned by uid 1", "run the backend as yourself"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.asAnother {
				if os.Getuid() != 0 {
					t.Skip("giving a socket to another user needs root")
				}
				tt.path = sockettest.NewServer(t, sockettest.Echo).Path
				if err := os.Chown(tt.path, 1, 1); err != nil {
					t.Fatal(err)
				}
			}
			opts := &options{socket: tt.path, poolSize: 1, maxReplySize: 1 << 20, allowAnyPeer: tt.anyPeer}
			assertResult(t, checkSocket(t.Context(), opts), tt.want)
		})
	}
}

// manifestsDir writes each manifest to its own file in a new folder.
func manifestsDir(t *testing.T, manifests ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, m := range manifests {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("m%d.json", i)), m, 0o644)
	}
	return dir
}

func snapshot(dirs ...string) *registry.Snapshot {
	log := zerolog.Nop()
	return newRegistry(&options{manifests: dirs, prefix: "tairseach"}, nil, &log, nil, nil).Snapshot()
}

func TestDoctorChecksTheManifests(t *testing.T) {
	unmapped := `{"id":"u","tools":[{"name":"u","description":"U.","inputSchema":{"type":"object"}}]}`
	broken := `{"id":"b","tools":[{"name":"x"}]}`
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		dirs []string
		want []check
	}{
		{"renamed tools are not warnings", []string{manifestsDir(t, okManifest)}, []check{{statusOK, "1 tool served from", ""}}},
		{"a warning", []string{manifestsDir(t, okManifest, unmapped)}, []check{{statusWarn, "0 errors, 1 warning", "tairseach-mcp validate"}}},
		{"an error", []string{manifestsDir(t, okManifest, broken)}, []check{{statusFail, "1 error, 0 warnings", "not served"}}},
		{"no tools", []string{manifestsDir(t)}, []check{{statusFail, "0 tools served", "add manifests"}}},
		{"a missing folder is said once", []string{missing, manifestsDir(t, okManifest)},
			[]check{{statusFail, missing + " does not exist", "point --manifests"}, {statusOK, "0 errors, 0 warnings", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := checkManifests(tt.dirs, snapshot(tt.dirs...))
			if len(rs) != len(tt.want) {
				t.Fatalf("got %d results, want %d: %+v", len(rs), len(tt.want), rs)
			}
			for i := range rs {
				assertResult(t, rs[i], tt.want[i])
			}
		})
	}
}

func TestDoctorChecksToolNames(t *testing.T) {
	entry := func(client, name string) *registry.Entry {
		return &registry.Entry{Name: client, Tool: &manifest.Tool{Name: name}}
	}
	ok := checkNames("tairseach", []*registry.Entry{entry("tairseach_notes_list", "notes.list"), entry("tairseach_ping", "ping")})
	assertResult(t, ok, check{statusOK, "all 2 valid for Claude Desktop; 1 renamed", ""})
	bad := checkNames("tairseach", []*registry.Entry{entry("tairseach_ping", "ping"), entry("tairseach_notes.list", "notes.list")})
	assertResult(t, bad, check{statusFail, `1 name invalid for Claude Desktop (^[a-zA-Z0-9_-]{1,64}$), which then refuses every tool: "tairseach_notes.list"`, "report it"})
}

// toolsList is a tools/list response with n tools whose descriptions are
// desc bytes long.
func toolsList(n, desc int) []byte {
	var tools []string
	for i := range n {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"%s","inputSchema":{"type":"object"}}`, i+1, strings.Repeat("x", desc)))
	}
	return []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[` + strings.Join(tools, ",") + `]}}`)
}

func TestDoctorChecksTheToolList(t *testing.T) {
	tests := []struct {
		name string
		line []byte
		want []check
	}{
		{"a few small tools", toolsList(3, 10), []check{
			{statusOK, "3: within Cursor's 40 and OpenAI's 128", ""},
			{statusOK, fmt.Sprintf("%d bytes, about %d tokens: 0.0%% of a 200k-token context", len(toolsList(3, 10)), estimateTokens(string(toolsList(3, 10)))), ""}}},
		{"past Cursor's 40", toolsList(41, 10), []check{{statusWarn, "41: Cursor uses only the first 40", "serve fewer tools"}, {statusOK, "", ""}}},
		{"past 80, what Cursor loses", toolsList(81, 10), []check{{statusWarn, "81: Cursor uses only the first 40; the other 41, from t41 on, are lost to it", "serve fewer tools"}, {statusOK, "", ""}}},
		{"past OpenAI's 128", toolsList(129, 10), []check{{statusWarn, "129: OpenAI's API refuses more than 128 tools", ""}, {statusOK, "", ""}}},
		{"more than a tenth of the context", toolsList(3, 30_000), []check{{statusOK, "3:", ""}, {statusWarn, "more than the 10% (20000 tokens) a tool list should take", "serve fewer tools"}}},
		{"the first of several pages", []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}],"nextCursor":"x"}}`), []check{
			{statusOK, "1 on the first page alone: within", ""}, {statusOK, "bytes on the first page alone, about", ""}}},
		{"no answer to tools/list", nil, []check{{statusInfo, "not measured", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := checkToolList(tt.line)
			if len(rs) != len(tt.want) {
				t.Fatalf("got %d results, want %d: %+v", len(rs), len(tt.want), rs)
			}
			for i := range rs {
				assertResult(t, rs[i], tt.want[i])
			}
		})
	}
}

func TestDoctorChecksEachClientsEntry(t *testing.T) {
	bin := t.TempDir()
	exe := filepath.Join(bin, "tairseach-mcp")
	other := filepath.Join(bin, "other-tairseach-mcp")
	writeFile(t, exe, "", 0o755)
	writeFile(t, other, "", 0o755)
	exe, _ = filepath.EvalSymlinks(exe)
	entry := func(command string, args ...string) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"tairseach": clientconfig.CommandEntry{Command: command, Args: append([]string{}, args...)}}})
		return string(b)
	}
	tests := []struct {
		name   string
		config string // "" leaves the file out
		want   check
	}{
		{"not installed", "", check{statusInfo, "the bridge is not installed", "tairseach-mcp install cursor"}},
		{"this binary", entry(exe, "--socket=/run/t.sock"), check{statusOK, "runs this binary, 1 flag", ""}},
		{"another binary", entry(other), check{statusWarn, "runs another binary, " + other, "to run this one (" + exe + ")"}},
		{"a binary that is gone", entry(filepath.Join(bin, "gone")), check{statusFail, "the command " + filepath.Join(bin, "gone") + " does not exist", "install cursor --force"}},
		{"an unknown flag", entry(exe, "--sockets=/x"), check{statusFail, `would refuse its args: unknown flag: --sockets (did you mean --socket?)`, "install cursor --force"}},
		{"a value the bridge refuses", entry(exe, "--transport=pigeon"), check{statusFail, `unknown transport "pigeon"`, ""}},
		{"an argument that is not a flag", entry(exe, "serve"), check{statusFail, `unexpected argument "serve"`, ""}},
		{"neither a command nor a URL", `{"mcpServers":{"tairseach":{"cmd":"x"}}}`, check{statusFail, `"tairseach" is neither a command nor a URL entry`, ""}},
		{"a file with comments", "{\n// mine\n}", check{statusFail, "has comments (line 2)", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMachine(t, "linux", nil)
			file := installed(t, m, client(t, "cursor"))
			if tt.config != "" {
				writeFile(t, file, tt.config, 0o600)
			}
			rs := checkClients(t.Context(), m, exe, "tairseach")
			if len(rs) != 1 || rs[0].Name != "cursor" {
				t.Fatalf("got %+v, want one result for cursor", rs)
			}
			assertResult(t, rs[0], tt.want)
		})
	}
	t.Run("no clients found", func(t *testing.T) {
		rs := checkClients(t.Context(), testMachine(t, "linux", nil), exe, "tairseach")
		if len(rs) != 1 {
			t.Fatalf("got %+v", rs)
		}
		assertResult(t, rs[0], check{statusInfo, "none found (looked for claude-desktop, ", ""})
	})
}

// cleanSession is what the bridge answers to session, with a
// notification among the responses.
var cleanSession = strings.Join([]string{
	`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
	`{"jsonrpc":"2.0","id":3,"result":{}}`,
	`{"jsonrpc":"2.0","id":"discover","result":{"supportedVersions":["2026-07-28"]}}`,
}, "\n") + "\n"

func TestDoctorChecksEveryStdoutLine(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(cleanSession, old, new, 1) }
	tests := []struct {
		name string
		tr   transcript
		want check
	}{
		{"messages only", transcript{stdout: []byte(cleanSession)}, check{statusOK, "5 lines, each one JSON-RPC message; 4 requests answered once each", ""}},
		{"a line that is not JSON", transcript{stdout: []byte("starting up\n" + cleanSession)}, check{statusFail, `line 1 is not a JSON-RPC message: "starting up"`, "report it"}},
		{"a blank line", transcript{stdout: []byte(cleanSession + "\n")}, check{statusFail, `line 6 is not a JSON-RPC message: ""`, ""}},
		{"JSON that is not an object", transcript{stdout: []byte("[1]\n" + cleanSession)}, check{statusFail, "line 1 is not a JSON-RPC message", ""}},
		{"a last line without its newline", transcript{stdout: []byte(strings.TrimSuffix(cleanSession, "\n"))}, check{statusFail, "line 5 is not a JSON-RPC message", ""}},
		{"no jsonrpc member", transcript{stdout: []byte(replace(`{"jsonrpc":"2.0","id":3`, `{"id":3`))}, check{statusFail, `line 4 lacks "jsonrpc": "2.0"`, ""}},
		{"an id never sent", transcript{stdout: []byte(replace(`"id":3`, `"id":"3"`))}, check{statusFail, "line 4 answers no request that was sent", ""}},
		{"a result and an error", transcript{stdout: []byte(replace(`"id":3,"result":{}`, `"id":3,"result":{},"error":{"code":1,"message":"x"}`))}, check{statusFail, "line 4 must hold a result or an error, and only one", ""}},
		{"two responses to one request", transcript{stdout: []byte(cleanSession + `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n")}, check{statusFail, "line 6 answers ping a second time", ""}},
		{"no response", transcript{stdout: []byte(replace(`{"jsonrpc":"2.0","id":3,"result":{}}`+"\n", ""))}, check{statusFail, "no response to ping", ""}},
		{"an error response", transcript{stdout: []byte(replace(`"id":"discover","result":{"supportedVersions":["2026-07-28"]}`, `"id":"discover","error":{"code":-32601,"message":"method not found"}`))},
			check{statusFail, "server/discover was answered with error -32601: method not found", "--log-level debug"}},
		{"a bridge that failed", transcript{cmdline: "/bin/tairseach-mcp --socket=/x", stderr: []byte("{\"level\":\"info\"}\nbad flag\n"), err: errors.New("exit status 2")},
			check{statusFail, `the bridge (/bin/tairseach-mcp --socket=/x) ended with: exit status 2; its last log line: "bad flag"`, "run that command by hand"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertResult(t, checkSession(tt.tr), tt.want)
		})
	}
}

func TestDoctorStartsTheBridgeAsAClientWould(t *testing.T) {
	dir := manifestsDir(t, okManifest)
	args := []string{"--manifests=" + dir, "--socket=" + filepath.Join(shortDir(t), "none.sock"), "--no-watch"}
	tests := []struct {
		child string
		want  check
	}{
		{"serve", check{statusOK, "4 requests answered once each", ""}},
		{"junk", check{statusFail, `line 1 is not a JSON-RPC message: "starting up"`, ""}},
		{"mute", check{statusFail, "no response to initialize", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.child, func(t *testing.T) {
			tr := runSession(t.Context(), os.Args[0], args, []string{childVar + "=" + tt.child})
			assertResult(t, checkSession(tr), tt.want)
			if got := checkToolList(tr.response("tools/list")); tt.child == "serve" && !strings.HasPrefix(got[0].Message, "1: within") {
				t.Errorf("tool count from the session: %+v", got)
			}
		})
	}
	t.Run("a binary that cannot start", func(t *testing.T) {
		tr := runSession(t.Context(), filepath.Join(dir, "nothing"), nil, nil)
		assertResult(t, checkSession(tr), check{statusFail, "ended with: fork/exec", "run that command by hand"})
	})
}

// runDoctorCmd runs doctor through the command line, with the test
// binary as the bridge it starts, and a home without clients.
func runDoctorCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	t.Setenv(childVar, "serve")
	e, out, errb := testEnv(map[string]string{"HOME": t.TempDir()})
	code := run(t.Context(), e, append([]string{"doctor"}, args...))
	return code, out.String() + errb.String()
}

func TestDoctorCommand(t *testing.T) {
	sock := sockettest.NewServer(t, sockettest.Echo).Path
	good := manifestsDir(t, okManifest)
	t.Run("all well", func(t *testing.T) {
		code, out := runDoctorCmd(t, "--manifests", good, "--socket", sock)
		if code != exitOK {
			t.Errorf("exit %d, want 0:\n%s", code, out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		var names []string
		for _, l := range lines[:len(lines)-1] {
			names = append(names, strings.Join(strings.Fields(l)[:2], " "))
		}
		want := []string{"✓ socket", "✓ manifests", "✓ tool", "✓ confirm", "✓ tool", "✓ tool", "- clients", "- audit", "- consoles", "✓ stdout"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("checks (-want +got):\n%s\n%s", diff, out)
		}
		if lines[len(lines)-1] != "10 checks: 0 failures, 0 warnings" {
			t.Errorf("summary %q", lines[len(lines)-1])
		}
		if !strings.Contains(out, "✓ tool names  all 1 valid") {
			t.Errorf("names are not aligned:\n%s", out)
		}
	})
	t.Run("warnings alone exit 0", func(t *testing.T) {
		dir := manifestsDir(t, okManifest, `{"id":"u","tools":[{"name":"u","description":"U.","inputSchema":{"type":"object"}}]}`)
		if code, out := runDoctorCmd(t, "--manifests", dir, "--socket", sock); code != exitOK || !strings.Contains(out, "0 failures, 1 warning") {
			t.Errorf("exit %d, want 0:\n%s", code, out)
		}
	})
	t.Run("a failure exits 1 and says the fix", func(t *testing.T) {
		code, out := runDoctorCmd(t, "--manifests", good, "--socket", filepath.Join(good, "none.sock"))
		if code != exitError || !strings.Contains(out, "✗ socket") || !strings.Contains(out, "\n              fix: start the backend") {
			t.Errorf("exit %d, want 1:\n%s", code, out)
		}
	})
	t.Run("--json", func(t *testing.T) {
		code, out := runDoctorCmd(t, "--json", "--manifests", good, "--socket", filepath.Join(good, "none.sock"))
		var rs []result
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if code != exitError || len(rs) != 10 {
			t.Fatalf("exit %d, %d checks:\n%s", code, len(rs), out)
		}
		if want := (result{"socket", statusFail, filepath.Join(good, "none.sock") + ": no socket there; is the backend running?", "start the backend, or point --socket (or TAIRSEACH_SOCKET) at its socket"}); rs[0] != want {
			t.Errorf("got %+v, want %+v", rs[0], want)
		}
		if rs[9].Name != "stdout" || rs[9].Status != statusOK || rs[1].Fix != "" {
			t.Errorf("got %+v", rs)
		}
		if strings.Contains(out, `"fix": ""`) {
			t.Errorf("an empty fix is written:\n%s", out)
		}
	})
	t.Run("arguments are refused", func(t *testing.T) {
		if code, out := runDoctorCmd(t, "now"); code != exitUsage {
			t.Errorf("exit %d, want 2:\n%s", code, out)
		}
	})
}

// Text from files reaches the terminal escaped.
func TestDoctorEscapesWhatItQuotes(t *testing.T) {
	dir := manifestsDir(t, okManifest)
	evil := filepath.Join(dir, "a\x1b[2Jb")
	code, out := runDoctorCmd(t, "--manifests", dir, "--socket", evil)
	if code != exitError || strings.Contains(out, "\x1b") || !strings.Contains(out, `a\x1b[2Jb: no socket there`) {
		t.Errorf("exit %d:\n%q", code, out)
	}
}
