package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

func testEnv(vars map[string]string) (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &env{
		stdin:  strings.NewReader(""),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
	}, &out, &errb
}

// parse runs flag and environment handling only, for every flag the
// bridge has, and returns the options.
func parse(t *testing.T, vars map[string]string, args ...string) (*options, error) {
	t.Helper()
	e, _, _ := testEnv(vars)
	opts := newOptions()
	fs := pflag.NewFlagSet("tairseach-mcp", pflag.ContinueOnError)
	opts.register(fs, allFlags)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return opts, opts.load(fs, e.getenv)
}

func TestPrecedenceIsFlagThenEnvironmentThenDefault(t *testing.T) {
	home, _ := os.UserHomeDir()
	tests := []struct {
		name  string
		vars  map[string]string
		args  []string
		check func(t *testing.T, o *options)
	}{
		{"defaults match the Rust bridge", nil, nil, func(t *testing.T, o *options) {
			if o.prefix != "tairseach" || o.callTimeout != 50*time.Second || o.transport != "stdio" {
				t.Errorf("defaults: %+v", o)
			}
			if want := filepath.Join(home, ".tairseach", "manifests"); len(o.manifests) != 1 || o.manifests[0] != want {
				t.Errorf("manifests = %v, want %s", o.manifests, want)
			}
		}},
		{"the environment overrides defaults", map[string]string{"TAIRSEACH_PREFIX": "x", "TAIRSEACH_CALL_TIMEOUT": "5s", "TAIRSEACH_SOCKET": "/s.sock"}, nil, func(t *testing.T, o *options) {
			if o.prefix != "x" || o.callTimeout != 5*time.Second || o.socket != "/s.sock" {
				t.Errorf("got %+v", o)
			}
		}},
		{"a flag overrides the environment", map[string]string{"TAIRSEACH_PREFIX": "x"}, []string{"--prefix", "y"}, func(t *testing.T, o *options) {
			if o.prefix != "y" {
				t.Errorf("prefix = %q", o.prefix)
			}
		}},
		{"an empty prefix variable means no prefix", map[string]string{"TAIRSEACH_PREFIX": ""}, nil, func(t *testing.T, o *options) {
			if o.prefix != "" {
				t.Errorf("prefix = %q", o.prefix)
			}
		}},
		{"the manifests variable is a path list", map[string]string{"TAIRSEACH_MANIFESTS": "/a" + string(os.PathListSeparator) + "/b"}, nil, func(t *testing.T, o *options) {
			if strings.Join(o.manifests, ",") != "/a,/b" {
				t.Errorf("manifests = %v", o.manifests)
			}
		}},
		{"a stray separator in the manifests variable is ignored", map[string]string{"TAIRSEACH_MANIFESTS": "/a" + string(os.PathListSeparator)}, nil, func(t *testing.T, o *options) {
			if strings.Join(o.manifests, ",") != "/a" {
				t.Errorf("manifests = %v", o.manifests)
			}
		}},
		{"repeated --manifests flags replace the variable", map[string]string{"TAIRSEACH_MANIFESTS": "/a"}, []string{"--manifests", "/c", "--manifests", "/d"}, func(t *testing.T, o *options) {
			if strings.Join(o.manifests, ",") != "/c,/d" {
				t.Errorf("manifests = %v", o.manifests)
			}
		}},
		{"a tilde is expanded", nil, []string{"--socket", "~/x.sock"}, func(t *testing.T, o *options) {
			if o.socket != filepath.Join(home, "x.sock") {
				t.Errorf("socket = %s", o.socket)
			}
		}},
		{"a boolean variable", map[string]string{"TAIRSEACH_NO_WATCH": "true"}, nil, func(t *testing.T, o *options) {
			if !o.noWatch {
				t.Error("noWatch not set")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, tt.vars, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

func TestBadSettingsAreUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"an unknown transport", nil, []string{"--transport", "carrier-pigeon"}, `unknown transport "carrier-pigeon": use stdio or http`},
		{"http off loopback without a token", nil, []string{"--transport", "http", "--listen", "0.0.0.0:0"}, `reachable from other machines: set a bearer token`},
		{"a bad log format", nil, []string{"--log-format", "xml"}, "unknown log format"},
		{"a bad log level", nil, []string{"--log-level", "loud"}, "unknown log level"},
		{"a bad duration in the environment", map[string]string{"TAIRSEACH_CALL_TIMEOUT": "soon"}, nil, "TAIRSEACH_CALL_TIMEOUT"},
		{"a zero pool", nil, []string{"--pool-size", "0"}, "--pool-size must be positive"},
		{"an unknown flag", nil, []string{"--frobnicate"}, "unknown flag"},
		{"an empty manifests folder, which would watch the working folder", nil, []string{"--manifests", ""}, `--manifests "" names no folder`},
		{"an empty manifests folder among others", nil, []string{"--manifests", "/a", "--manifests", ""}, `--manifests "" names no folder`},
		{"an empty manifests variable", map[string]string{"TAIRSEACH_MANIFESTS": ""}, nil, `TAIRSEACH_MANIFESTS="" names no folder`},
		{"a manifests variable of separators only", map[string]string{"TAIRSEACH_MANIFESTS": string(os.PathListSeparator)}, nil, "TAIRSEACH_MANIFESTS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, errb := testEnv(tt.vars)
			code := run(context.Background(), e, tt.args)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitUsage, errb)
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", errb, tt.want)
			}
		})
	}
}

func TestDefaultSocketFallsBackToTmp(t *testing.T) {
	home := t.TempDir()
	primary := filepath.Join(home, ".tairseach", "tairseach.sock")
	if got := defaultSocket(home); got != primary {
		t.Errorf("neither exists: %s, want %s", got, primary)
	}
	fallback := filepath.Join(os.TempDir(), "tairseach-"+strconv.Itoa(os.Getuid())+".sock")
	if _, err := os.Stat(fallback); err == nil {
		t.Skip("a real fallback socket exists on this machine")
	}
	if err := os.WriteFile(fallback, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(fallback)
	if got := defaultSocket(home); got != fallback {
		t.Errorf("only the fallback exists: %s, want %s", got, fallback)
	}
	os.MkdirAll(filepath.Dir(primary), 0o700)
	os.WriteFile(primary, nil, 0o600)
	if got := defaultSocket(home); got != primary {
		t.Errorf("both exist: %s, want %s", got, primary)
	}
}

const okManifest = `{"id":"n","tools":[{"name":"notes.list","description":"List.","inputSchema":{"type":"object"}}],"implementation":{"methods":{"notes.list":"notes.list"}}}`

func TestValidateReportsProblemsAndExitStatus(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(okManifest), 0o644)
	e, out, _ := testEnv(nil)
	if code := run(context.Background(), e, []string{"validate", dir}); code != exitOK {
		t.Errorf("warnings only: exit %d, want 0\n%s", code, out)
	}
	// A rename is expected, not a warning: one line, and the list with --verbose.
	if want := "1 tool renamed for clients (names must match ^[a-zA-Z0-9_-]{1,64}$); --verbose lists them\n1 tool served; 0 errors, 0 warnings\n"; out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	e, out, _ = testEnv(nil)
	if code := run(context.Background(), e, []string{"validate", "--strict", "--verbose", dir}); code != exitOK {
		t.Errorf("--strict with renames only: exit %d, want 0", code)
	}
	if want := `ok.json:tools[0].name: info: clients see this tool as "tairseach_notes_list"`; !strings.Contains(out.String(), want) {
		t.Errorf("--verbose output lacks %q:\n%s", want, out)
	}
	os.WriteFile(filepath.Join(dir, "warn.json"), []byte(strings.Replace(okManifest, `"List."`, `""`, 1)), 0o644)
	e, _, _ = testEnv(nil)
	if code := run(context.Background(), e, []string{"validate", "--strict", dir}); code != exitError {
		t.Errorf("--strict with warnings: exit %d, want 1", code)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"id":"b","tools":[{"name":"x"}]}`), 0o644)
	e, out, _ = testEnv(nil)
	if code := run(context.Background(), e, []string{"validate", "--json", dir}); code != exitError {
		t.Errorf("errors: exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), `"path": "tools[0]"`) || !strings.Contains(out.String(), `"severity": "error"`) {
		t.Errorf("json output:\n%s", out)
	}
}

// validate names the tool, the argument and the rule of an x-mcp-header
// that breaks MCP's rules, and the tool is not served.
func TestValidateReportsAnInvalidParamHeader(t *testing.T) {
	dir := t.TempDir()
	bad := strings.Replace(okManifest, `"inputSchema":{"type":"object"}`,
		`"inputSchema":{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}`, 1)
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(bad), 0o644)
	e, out, _ := testEnv(nil)
	if code := run(context.Background(), e, []string{"validate", dir}); code != exitError {
		t.Errorf("exit %d, want 1", code)
	}
	want := `bad.json:tools[0].inputSchema.properties.score.x-mcp-header: error: x-mcp-header "Score" on argument score is on a "number": ` +
		`only "string", "integer" and "boolean" can be mirrored into a header, not fractions; use "integer" for whole numbers; ` +
		`MCP clients drop a tool with an invalid x-mcp-header, so tool "notes.list" is not served`
	if !strings.Contains(out.String(), want+"\n") || !strings.Contains(out.String(), "0 tools served; 1 error") {
		t.Errorf("output:\n%s\nwant a line:\n%s", out, want)
	}
}

func TestToolsListsWhatWouldBeServed(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(okManifest), 0o644)
	e, out, _ := testEnv(nil)
	if code := run(context.Background(), e, []string{"tools", "--manifests", dir}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "tairseach_notes_list") || !strings.Contains(out.String(), "notes.list") || !strings.Contains(out.String(), "ok.json") {
		t.Errorf("tools output:\n%s", out)
	}
	e, out, _ = testEnv(nil)
	run(context.Background(), e, []string{"tools", "--json", "--prefix", "", "--manifests", dir})
	if !strings.Contains(out.String(), `"name": "notes_list"`) || !strings.Contains(out.String(), `"method": "notes.list"`) {
		t.Errorf("tools --json output:\n%s", out)
	}
}

// Manifests, file names and backend methods are anyone's text: validate
// and tools never print their control characters raw to a terminal.
func TestValidateAndToolsEscapeControlCharacters(t *testing.T) {
	dir := t.TempDir()
	evil := strings.NewReplacer(`"notes.list"}`, `"notes.\u001b[2Jlist\u202e"}`, `"description":"List."`, `"description":"List.\u001b]0;pwned\u0007"`).Replace(okManifest)
	if err := os.WriteFile(filepath.Join(dir, "ev\x1b[31mil.json"), []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", "--verbose", dir}, {"tools", "--manifests", dir}} {
		e, out, errb := testEnv(nil)
		run(context.Background(), e, args)
		all := out.String() + errb.String()
		if strings.ContainsAny(all, "\x1b\x07\u202e") {
			t.Errorf("%s printed control characters raw:\n%q", args[0], all)
		}
		if !strings.Contains(all, `\x1b[31m`) {
			t.Errorf("%s output lacks the escaped file name:\n%s", args[0], all)
		}
	}
}

// A mistyped manifests folder is an error for the commands that read the
// manifests once, not "0 tools".
func TestAMissingManifestsFolderIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "manifestz")
	for _, args := range [][]string{
		{"tools", "--manifests", missing},
		{"validate", missing},
		{"validate", "--manifests", missing},
		{"call", "--manifests", missing, "tairseach_notes_list"},
		{"resources", "--manifests", missing},
		{"prompts", "--manifests", missing},
		{"read", "--manifests", missing, "tairseach://system/status"},
		{"prompt", "--manifests", missing, "notes.review", "id=3f"},
	} {
		e, _, errb := testEnv(nil)
		if code := run(context.Background(), e, args); code != exitError {
			t.Errorf("%v: exit %d, want %d", args, code, exitError)
		}
		if want := missing + " does not exist: point --manifests"; !strings.Contains(errb.String(), want) {
			t.Errorf("%v: stderr %q lacks %q", args, errb, want)
		}
	}
}

func TestCommandsFlagsAndValuesSayWhatToType(t *testing.T) {
	for _, tt := range []struct {
		args []string
		vars map[string]string
		want string
	}{
		{[]string{"tols"}, nil, `unknown command "tols" (did you mean tools?)`},
		{[]string{"call", "--sockt", "/x", "tairseach_notes_list"}, nil, "unknown flag: --sockt (did you mean --socket?)"},
		{[]string{"validate", "--jsn"}, nil, "Run 'tairseach-mcp validate --help' for usage."},
		{[]string{"--max-reply-size", "1 potato"}, nil, `"1 potato" is not a size: write bytes, or a number with a unit such as 32MiB`},
		{nil, map[string]string{"TAIRSEACH_NO_WATCH": "maybe"}, `TAIRSEACH_NO_WATCH="maybe": "maybe" is not a boolean: use true or false`},
		{[]string{"--pool-size", "many"}, nil, `"many" is not a whole number`},
		{[]string{"--call-timeout", "soon"}, nil, `"soon" is not a duration`},
	} {
		e, _, errb := testEnv(tt.vars)
		if code := run(context.Background(), e, tt.args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tt.args, code, exitUsage)
		}
		if !strings.Contains(errb.String(), tt.want) || strings.Contains(errb.String(), "strconv") {
			t.Errorf("%v: stderr %q lacks %q", tt.args, errb, tt.want)
		}
	}
	for _, tt := range []struct {
		vars map[string]string
		args []string
		ok   func(o *options) bool
	}{
		{nil, []string{"--max-message-size", "1MiB"}, func(o *options) bool { return o.maxMessageSize == 1<<20 }},
		{nil, []string{"--max-reply-size", "512 KiB"}, func(o *options) bool { return o.maxReplySize == 512<<10 }},
		{nil, []string{"--max-reply-size", "2000"}, func(o *options) bool { return o.maxReplySize == 2000 }},
		{map[string]string{"TAIRSEACH_NO_WATCH": "yes"}, nil, func(o *options) bool { return o.noWatch }},
		{map[string]string{"TAIRSEACH_ALLOW_ANY_PEER": "off"}, []string{}, func(o *options) bool { return !o.allowAnyPeer }},
		{nil, []string{"--no-watch"}, func(o *options) bool { return o.noWatch }},
	} {
		o, err := parse(t, tt.vars, tt.args...)
		if err != nil || !tt.ok(o) {
			t.Errorf("%v %v: %+v, %v", tt.vars, tt.args, o, err)
		}
	}
}

// call takes a tool by its client name, its manifest name or its name
// without the prefix, and says why a declared tool is not served.
func TestCallFindsTheToolAPersonMeans(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(okManifest), 0o644)
	hidden := `{"id":"h","tools":[{"name":"notes.secret","description":"S.","inputSchema":{"type":"object"},"mcpExpose":false}],"implementation":{"methods":{"notes.secret":"notes.secret"}}}`
	os.WriteFile(filepath.Join(dir, "hidden.json"), []byte(hidden), 0o644)
	sock := filepath.Join(t.TempDir(), "none.sock")
	for _, tt := range []struct {
		name, want string
		code       int
	}{
		{"tairseach_notes_list", "not reachable", exitError},
		{"notes.list", "not reachable", exitError},
		{"notes_list", "not reachable", exitError},
		{"notes.lst", `unknown tool "notes.lst" (did you mean`, exitUnknownTool},
		{"notes.secret", "notes.secret (tools[0] in " + filepath.Join(dir, "hidden.json") + ") is not served: hidden by mcpExpose: false", exitUnknownTool},
	} {
		e, _, errb := testEnv(nil)
		code := run(context.Background(), e, []string{"call", "--manifests", dir, "--socket", sock, tt.name})
		if !strings.Contains(errb.String(), tt.want) {
			t.Errorf("call %s: stderr %q lacks %q", tt.name, errb, tt.want)
		}
		if code != tt.code {
			t.Errorf("call %s: exit %d, want %d", tt.name, code, tt.code)
		}
	}
}

// call refuses arguments that are not one JSON object with a usage
// error that says where they go wrong, by line and column.
func TestCallSaysWhereItsArgumentsGoWrong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(okManifest), 0o644)
	for _, tt := range []struct{ args, stdin, want string }{
		{args: `{"a":1,}`, want: "the arguments are not valid JSON: line 1, column 8: invalid character '}'"},
		{args: "-", stdin: "{\n  \"a\": tru\n}\n", want: "the arguments are not valid JSON: line 2, column 11: invalid character '\\n' in literal true"},
		{args: `{"a":1} x`, want: "line 1, column 9: invalid character 'x' after top-level value"},
		{args: `{"a":1,"a":2}`, want: "line 1, column 8: duplicate object member name"},
		{args: `[1]`, want: "the arguments must be a JSON object, like '{\"key\":\"value\"}', not an array"},
		{args: ` `, want: "the arguments are empty"},
	} {
		e, _, errb := testEnv(nil)
		e.stdin = strings.NewReader(tt.stdin)
		code := run(context.Background(), e, []string{"call", "--manifests", dir, "notes.list", tt.args})
		if code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("call with %q: exit %d, stderr %q; want %d and %q", tt.args+tt.stdin, code, errb, exitUsage, tt.want)
		}
	}
}

// tools, like validate, exits 1 when the manifests have errors, in every
// form of its output.
func TestToolsExitsOneOnManifestErrors(t *testing.T) {
	t.Parallel()
	good := t.TempDir()
	os.WriteFile(filepath.Join(good, "ok.json"), []byte(okManifest), 0o644)
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "ok.json"), []byte(okManifest), 0o644)
	os.WriteFile(filepath.Join(bad, "broken.json"), []byte(`{"id":`), 0o644)
	for _, form := range [][]string{nil, {"--json"}, {"--tokens"}} {
		for _, tt := range []struct {
			dir  string
			code int
		}{{good, exitOK}, {bad, exitError}} {
			e, out, errb := testEnv(nil)
			code := run(context.Background(), e, append([]string{"tools", "--manifests", tt.dir}, form...))
			if code != tt.code {
				t.Errorf("tools %v on %s: exit %d, want %d\n%s%s", form, filepath.Base(tt.dir), code, tt.code, out, errb)
			}
			if tt.code == exitError && !strings.Contains(errb.String(), "1 error in the manifests, see 'tairseach-mcp validate'") {
				t.Errorf("tools %v: stderr does not say why it failed:\n%s", form, errb)
			}
			if !strings.Contains(out.String(), "tairseach_notes_list") {
				t.Errorf("tools %v: the served tool is not listed:\n%s", form, out)
			}
		}
	}
}

// call asks before a tool that asks first: --yes says yes; in a script,
// without it, it refuses, and the backend is not called. tools says which
// tools ask first, and why.
func TestCallAndToolsWithAToolThatAsksFirst(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"id":"d","tools":[
		{"name":"notes.delete","description":"D.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
		{"name":"notes.keep","description":"K.","inputSchema":{"type":"object"}}],
		"implementation":{"methods":{"notes.delete":"notes.delete","notes.keep":"notes.keep"}}}`), 0o644)
	be := sockettest.NewServer(t, sockettest.Echo)
	deletes := func() int {
		n := 0
		for _, r := range be.Requests() {
			if r.Method == "notes.delete" {
				n++
			}
		}
		return n
	}
	e, _, errb := testEnv(nil)
	if code := run(t.Context(), e, []string{"call", "--manifests", dir, "--socket", be.Path, "notes.delete"}); code != exitError ||
		!strings.Contains(errb.String(), "pass --yes") || deletes() != 0 {
		t.Errorf("in a script without --yes: exit %d, %d deletes, stderr %q", code, deletes(), errb)
	}
	e, out, errb := testEnv(nil)
	if code := run(t.Context(), e, []string{"call", "--manifests", dir, "--socket", be.Path, "--yes", "notes.delete"}); code != exitOK || deletes() != 1 {
		t.Errorf("with --yes: exit %d, %d deletes, stdout %q, stderr %q", code, deletes(), out, errb)
	}
	e, out, _ = testEnv(nil)
	run(t.Context(), e, []string{"tools", "--manifests", dir, "--confirm", "*keep"})
	if !strings.Contains(out.String(), "yes: destructiveHint") || !strings.Contains(out.String(), "yes: --confirm *keep") {
		t.Errorf("tools does not say which tools ask first:\n%s", out)
	}
}

// version and uninstall take none of the bridge's flags, and stats only
// --audit-log: their help lists no other, the command line refuses them,
// and their variables change nothing.
func TestCommandsWithoutTheBridgesFlags(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		want []string // flags its help lists
	}{
		{"version", nil},
		{"uninstall", []string{"--name", "--dry-run"}},
		{"stats", []string{"--audit-log", "--since", "--until", "--tool", "--json"}},
	} {
		e, out, errb := testEnv(nil)
		if code := run(t.Context(), e, []string{tt.cmd, "--help"}); code != exitOK {
			t.Fatalf("%s --help: exit %d, %s", tt.cmd, code, errb)
		}
		for _, flag := range []string{"--tls-cert", "--listen", "--call-timeout", "--socket", "--manifests", "--max-held-bytes", "--audit-values"} {
			if strings.Contains(out.String(), flag) {
				t.Errorf("%s --help lists %s:\n%s", tt.cmd, flag, out)
			}
		}
		for _, flag := range tt.want {
			if !strings.Contains(out.String(), flag) {
				t.Errorf("%s --help does not list %s:\n%s", tt.cmd, flag, out)
			}
		}
	}
	for _, args := range [][]string{{"version", "--socket", "/x.sock"}, {"--call-timeout", "5s", "version"}, {"uninstall", "cursor", "--manifests", "/m"}} {
		e, _, errb := testEnv(nil)
		if code := run(t.Context(), e, args); code != exitUsage || !strings.Contains(errb.String(), "unknown flag: --") {
			t.Errorf("%v: exit %d, stderr %q; want %d and an unknown flag", args, code, errb, exitUsage)
		}
	}
	e, out, errb := testEnv(map[string]string{"TAIRSEACH_CALL_TIMEOUT": "soon", "TAIRSEACH_TRANSPORT": "pigeon"})
	if code := run(t.Context(), e, []string{"version"}); code != exitOK || !strings.HasPrefix(out.String(), "tairseach-mcp ") {
		t.Errorf("version with variables of flags it does not take: exit %d, %s%s", code, out, errb)
	}
}

// A variable sets its flag's value, and leaves the flag unchanged: what
// Changed says came from the command line.
func TestAVariableDoesNotChangeItsFlag(t *testing.T) {
	opts := newOptions()
	fs := pflag.NewFlagSet("tairseach-mcp", pflag.ContinueOnError)
	opts.register(fs, allFlags)
	if err := fs.Parse([]string{"--prefix", "p"}); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"TAIRSEACH_CALL_TIMEOUT": "5s", "TAIRSEACH_MANIFESTS": "/a", "TAIRSEACH_NO_WATCH": "1", "TAIRSEACH_PREFIX": "q", "TAIRSEACH_LOG_LEVEL": "warn"}
	if err := opts.load(fs, func(k string) (string, bool) { v, ok := vars[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if opts.callTimeout != 5*time.Second || !slices.Equal(opts.manifests, []string{"/a"}) || !opts.noWatch || opts.prefix != "p" || opts.logLevel != "warn" {
		t.Errorf("settings %+v", opts)
	}
	for _, name := range []string{"call-timeout", "manifests", "no-watch", "log-level"} {
		if fs.Changed(name) {
			t.Errorf("--%s is Changed by its variable", name)
		}
	}
	if !fs.Changed("prefix") {
		t.Error("--prefix given is not Changed")
	}
	if want := []string{"manifests", "call-timeout", "log-level", "no-watch"}; !slices.Equal(slices.Sorted(slices.Values(opts.fromEnv)), slices.Sorted(slices.Values(want))) {
		t.Errorf("set from variables: %v, want %v", opts.fromEnv, want)
	}
	if !opts.logLevelSet {
		t.Error("--log-level's variable does not count as asking for a level")
	}
}

// Each command takes the flags of the bridge's settings it uses, and no
// other: its help lists them, and the command line refuses the others.
func TestEachCommandTakesOnlyItsFlags(t *testing.T) {
	var (
		catalog  = []string{"manifests", "prefix"}
		filter   = []string{"include", "exclude", "read-only"}
		policy   = []string{"tool-mode", "search-learn", "confirm", "confirm-unsupported"}
		backend  = []string{"socket", "call-timeout", "pool-size", "max-reply-size", "allow-any-peer"}
		checks   = []string{"max-depth", "max-number-length", "max-checked-size", "max-checked-values"}
		logs     = []string{"log-level", "log-format"}
		session  = []string{"instructions", "no-watch", "progress-interval", "ask-timeout", "max-pending-asks", "max-message-size", "max-in-flight", "max-held-bytes"}
		audit    = []string{"audit-log", "audit-values", "audit-max-size", "audit-keep"}
		named    = []string{"clients", "client"}
		ui       = []string{"ui"}
		tasks    = []string{"task-timeout", "max-tasks", "max-tasks-per-owner", "max-task-ttl", "max-task-bytes"}
		listener = []string{"transport", "listen", "allowed-origins", "allowed-hosts", "auth-token-file", "tls-cert", "tls-key", "insecure-http",
			"max-sessions", "session-timeout", "max-total-in-flight", "max-total-held-bytes", "max-body-size", "header-timeout", "idle-timeout", "stall-timeout", "max-streams", "max-connections"}
		entry = slices.Concat(catalog, filter, policy, backend, checks, logs, session, audit, tasks, named, ui) // what a stdio bridge takes
		all   = slices.Concat(entry, listener)
	)
	if len(all) != len(settings) {
		t.Fatalf("the test names %d settings, the bridge has %d", len(all), len(settings))
	}
	for _, tt := range []struct {
		cmd  string
		want []string
	}{
		{"", all},
		{"install", slices.Concat(entry, []string{"auth-token-file"})}, // with --url, its token
		{"doctor", entry},
		{"tools", slices.Concat(catalog, filter, policy)},
		{"call", slices.Concat(catalog, filter, policy, backend, checks, logs, audit, []string{"task-timeout"})},
		{"read", slices.Concat(catalog, filter, backend, logs, audit)},
		{"prompt", slices.Concat(catalog, filter, backend, logs, audit)},
		{"resources", slices.Concat(catalog, filter)},
		{"prompts", slices.Concat(catalog, filter)},
		{"validate", slices.Concat(catalog, filter, []string{"clients"})},
		{"stats", []string{"audit-log"}},
		{"version", nil},
		{"uninstall", nil},
		// clients add's --read-only, --include, … are its own: a policy's.
		{"clients add", []string{"clients"}},
		{"clients list", []string{"clients", "audit-log"}},
		{"clients remove", []string{"clients"}},
		{"clients rotate", []string{"clients"}},
	} {
		name := tt.cmd
		if name == "" {
			name = "tairseach-mcp"
		}
		if _, sub, ok := strings.Cut(name, " "); ok {
			name = sub
		}
		root := newRootCmd(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
		cmd, _, err := root.Find(strings.Fields(tt.cmd))
		if err != nil || cmd.Name() != name {
			t.Fatalf("%s: found %s, %v", name, cmd.Name(), err)
		}
		var got []string
		for _, fs := range []*pflag.FlagSet{cmd.LocalFlags(), cmd.InheritedFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if slices.Contains(all, f.Name) && !isOwn(f) {
					got = append(got, f.Name)
				}
			})
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.want))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s takes (-want +got):\n%s", name, diff)
		}
	}
}

// --ui is a loopback address of a bridge over stdio, and
// --confirm-unsupported page needs a console.
func TestTheConsolesFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--ui", "0.0.0.0:0"}, "the console listens on loopback only"},
		{[]string{"--ui", "8411"}, "want a loopback HOST:PORT"},
		{[]string{"--ui", "127.0.0.1:0", "--transport", "http"}, "over HTTP it is at /ui on the listener"},
		{[]string{"--confirm-unsupported", "ask"}, "--confirm-unsupported is allow, deny or page"},
		{[]string{"--confirm-unsupported", "page"}, "serve one with --transport http (at /ui) or, over stdio, --ui 127.0.0.1:0"},
	} {
		e, _, errb := testEnv(nil)
		if code := run(t.Context(), e, append(tt.args, "--manifests", t.TempDir())); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// doctor lists the consoles of the bridges running, with their
// addresses, and not those of bridges gone.
func TestDoctorListsTheConsolesOfRunningBridges(t *testing.T) {
	home := t.TempDir()
	if _, err := writeRunFile(home, runFile{PID: os.Getpid(), URL: "http://127.0.0.1:1/ui/?s=abc", Transport: "stdio"}); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := writeRunFile(home, runFile{PID: gone.Process.Pid, URL: "http://127.0.0.1:2/ui/?s=def", Transport: "http"}); err != nil {
		t.Fatal(err)
	}
	r := checkConsoles(home)
	if !strings.Contains(r.Message, "1 console of running bridges: http://127.0.0.1:1/ui/?s=abc (pid") || strings.Contains(r.Message, "127.0.0.1:2") {
		t.Errorf("doctor says %q", r.Message)
	}
	fi, err := os.Stat(filepath.Join(runDir(home), "bridge-"+strconv.Itoa(os.Getpid())+".json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("run file: %v %v", fi, err)
	}
}
