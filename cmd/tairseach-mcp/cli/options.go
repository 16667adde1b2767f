package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// options are the settings every command shares. Each has a flag and an
// environment variable; a flag wins over the variable, which wins over
// the default.
type options struct {
	transport      string
	socket         string
	manifests      []string
	prefix         string
	callTimeout    time.Duration
	logLevel       string
	logFormat      string
	instructions   string
	noWatch        bool
	progress       time.Duration
	maxMessageSize int
	maxInFlight    int
	maxHeldBytes   int
	poolSize       int
	maxReplySize   int
	allowAnyPeer   bool
	limits         manifest.Limits
	include        []string
	exclude        []string
	readOnly       bool
	toolMode       string
	audit          auditOptions
	confirm        []string
	confirmDeny    string           // --confirm-unsupported
	confirmPolicy  registry.Confirm // of confirm and confirmDeny, made by resolve
	logLevelSet    bool             // --log-level or its variable was given
	http           httpOptions
}

// setting describes one flag and its variable, for registration and help.
type setting struct {
	flag, env, usage string
}

var settings = []setting{
	{"transport", "TAIRSEACH_TRANSPORT", "MCP transport: stdio (what desktop clients start), or http (Streamable HTTP, one bridge for many clients; see --listen)"},
	{"socket", "TAIRSEACH_SOCKET", "backend Unix socket (default ~/.tairseach/tairseach.sock, or /tmp/tairseach-<uid>.sock when only that exists)"},
	{"manifests", "TAIRSEACH_MANIFESTS", "manifest folder, read recursively; repeat for several (the variable takes a path list) (default ~/.tairseach/manifests)"},
	{"prefix", "TAIRSEACH_PREFIX", `prefix of client-visible tool names, <prefix>_<name>; "" for none`},
	{"call-timeout", "TAIRSEACH_CALL_TIMEOUT", "longest wait for one backend call (Claude Desktop gives up at 60s)"},
	{"log-level", "TAIRSEACH_LOG_LEVEL", "stderr log level: trace, debug, info, warn, error"},
	{"log-format", "TAIRSEACH_LOG_FORMAT", "stderr log format: json, console, or auto (console on a terminal)"},
	{"instructions", "TAIRSEACH_INSTRUCTIONS", "instructions sent to clients with the server's capabilities"},
	{"no-watch", "TAIRSEACH_NO_WATCH", "do not watch manifest folders for changes"},
	{"progress-interval", "TAIRSEACH_PROGRESS_INTERVAL", "period of notifications/progress heartbeats for calls that carry a progressToken; 0 turns them off"},
	{"max-message-size", "TAIRSEACH_MAX_MESSAGE_SIZE", "largest incoming MCP message (bytes, or with a unit: 32MiB, 512KiB)"},
	{"max-in-flight", "TAIRSEACH_MAX_IN_FLIGHT", "most tool calls running at once; as many more wait in line, and past that stdin is not read (backpressure)"},
	{"max-held-bytes", "TAIRSEACH_MAX_HELD_BYTES", "most bytes held on behalf of requests: arguments, backend replies being read, responses and notifications not yet written; past it the bridge reads no more requests or replies until there is room (bytes, or with a unit: 64MiB)"},
	{"pool-size", "TAIRSEACH_POOL_SIZE", "most connections to the backend"},
	{"max-reply-size", "TAIRSEACH_MAX_REPLY_SIZE", "largest backend reply (bytes, or with a unit: 32MiB, 512KiB)"},
	{"allow-any-peer", "TAIRSEACH_ALLOW_ANY_PEER", "skip checking that the socket and the backend belong to the current user"},
	{"max-depth", "TAIRSEACH_MAX_DEPTH", "deepest nesting of arguments and results checked against a schema"},
	{"max-number-length", "TAIRSEACH_MAX_NUMBER_LENGTH", "longest number (in characters) in arguments and results checked against a schema"},
	{"max-checked-size", "TAIRSEACH_MAX_CHECKED_SIZE", "largest arguments or result checked against a schema (bytes, or with a unit: 8MiB)"},
	{"max-checked-values", "TAIRSEACH_MAX_CHECKED_VALUES", "most values (strings, numbers, members, elements) in arguments or a result checked against a schema"},
	{"include", "TAIRSEACH_INCLUDE", "serve only tools whose client name (tairseach_mail_*) or manifest name (mail.*) matches this glob (prompts likewise, resources by URI or name); repeatable, or comma-separated"},
	{"exclude", "TAIRSEACH_EXCLUDE", "do not serve tools whose client or manifest name matches this glob (prompts and resources likewise; wins over --include); repeatable, or comma-separated"},
	{"read-only", "TAIRSEACH_READ_ONLY", "serve only tools whose annotations say readOnlyHint: true, and resources whose backend method such a tool has"},
	{"tool-mode", "TAIRSEACH_TOOL_MODE", "all: list every tool; search: list only <prefix>_find_tools and <prefix>_call_tool, which find and call the others"},
	{"confirm", "TAIRSEACH_CONFIRM", "which tools ask the user before they run: destructive (tools annotated destructiveHint: true, and those whose manifest sets confirm), all, never, or globs of tool names asked in addition; repeatable, or comma-separated"},
	{"confirm-unsupported", "TAIRSEACH_CONFIRM_UNSUPPORTED", "when the client cannot ask the user (no elicitation): allow runs such tools unconfirmed (logged once per tool), deny refuses them"},
	{"audit-log", "TAIRSEACH_AUDIT_LOG", "record every tool call, one JSON line each, in this file, which bridge processes share (off by default; read it with 'tairseach-mcp stats')"},
	{"audit-values", "TAIRSEACH_AUDIT_VALUES", "also record the arguments' values in the audit log, secrets redacted by name and schema"},
	{"audit-max-size", "TAIRSEACH_AUDIT_MAX_SIZE", "size at which the audit log is rotated (bytes, or with a unit: 10MiB)"},
	{"audit-keep", "TAIRSEACH_AUDIT_KEEP", "rotated audit logs kept beside it (PATH.1 the newest)"},
}

// httpSettings are the flags of --transport http.
var httpSettings = []setting{
	{"listen", "TAIRSEACH_LISTEN", "with --transport http: where to listen, 127.0.0.1:PORT, [::1]:PORT, HOST:0 for any free port, or unix:PATH for a Unix socket"},
	{"allowed-origins", "TAIRSEACH_ALLOWED_ORIGINS", "browser origins allowed besides loopback ones, exactly as sent (https://app.example); repeatable, or comma-separated"},
	{"allowed-hosts", "TAIRSEACH_ALLOWED_HOSTS", "Host header values allowed besides loopback names and the listen address (bridge.lan:8411); repeatable, or comma-separated"},
	{"auth-token-file", "TAIRSEACH_AUTH_TOKEN_FILE", "file holding the bearer token clients must send (or set TAIRSEACH_AUTH_TOKEN); required off loopback"},
	{"tls-cert", "TAIRSEACH_TLS_CERT", "TLS certificate file (PEM); with --tls-key, serve HTTPS"},
	{"tls-key", "TAIRSEACH_TLS_KEY", "TLS private key file (PEM)"},
	{"insecure-http", "TAIRSEACH_INSECURE_HTTP", "allow plain HTTP on an address other than loopback (the token then travels in clear)"},
	{"max-sessions", "TAIRSEACH_MAX_SESSIONS", "most HTTP sessions at once; when full, the one idle the longest is ended (never a busy one: then 503)"},
	{"session-timeout", "TAIRSEACH_SESSION_TIMEOUT", "an HTTP session no request has used this long (an open GET stream is use) is ended, and calls it left are cancelled"},
	{"max-total-in-flight", "TAIRSEACH_MAX_TOTAL_IN_FLIGHT", "most tool calls running at once over all HTTP sessions"},
	{"max-total-held-bytes", "TAIRSEACH_MAX_TOTAL_HELD_BYTES", "most bytes held for requests over all HTTP sessions (see --max-held-bytes, which bounds each)"},
	{"max-body-size", "TAIRSEACH_MAX_BODY_SIZE", "largest HTTP request body (bytes, or with a unit: 4MiB)"},
	{"header-timeout", "TAIRSEACH_HEADER_TIMEOUT", "longest time to read a request's headers"},
	{"idle-timeout", "TAIRSEACH_IDLE_TIMEOUT", "an idle keep-alive connection is closed after this long"},
	{"stall-timeout", "TAIRSEACH_STALL_TIMEOUT", "a client that reads less than 64 KiB of a response (or all there is) in this long loses that response or stream; one that keeps reading never does"},
	{"max-streams", "TAIRSEACH_MAX_STREAMS", "most subscriptions/listen streams (protocol 2026-07-28) open at once over all HTTP clients"},
	{"max-connections", "TAIRSEACH_MAX_CONNECTIONS", "most HTTP connections open at once; past it a new connection gets 503 and is closed"},
}

func (o *options) register(fs *pflag.FlagSet) {
	u := func(name string) string {
		for _, s := range slices.Concat(settings, httpSettings) {
			if s.flag == name {
				return fmt.Sprintf("%s (env %s)", s.usage, s.env)
			}
		}
		panic("cli: no setting " + name)
	}
	fs.StringVar(&o.transport, "transport", "stdio", u("transport"))
	fs.StringVar(&o.socket, "socket", "", u("socket"))
	fs.StringArrayVar(&o.manifests, "manifests", nil, u("manifests"))
	fs.StringVar(&o.prefix, "prefix", "tairseach", u("prefix"))
	durationVar(fs, &o.callTimeout, "call-timeout", registry.DefaultCallTimeout, u("call-timeout"))
	fs.StringVar(&o.logLevel, "log-level", "info", u("log-level"))
	fs.StringVar(&o.logFormat, "log-format", "auto", u("log-format"))
	fs.StringVar(&o.instructions, "instructions", "", u("instructions"))
	boolVar(fs, &o.noWatch, "no-watch", false, u("no-watch"))
	durationVar(fs, &o.progress, "progress-interval", protocol.DefaultProgressInterval, u("progress-interval"))
	sizeVar(fs, &o.maxMessageSize, "max-message-size", protocol.DefaultMaxMessageSize, u("max-message-size"))
	countVar(fs, &o.maxInFlight, "max-in-flight", protocol.DefaultMaxInFlight, u("max-in-flight"))
	sizeVar(fs, &o.maxHeldBytes, "max-held-bytes", protocol.DefaultMaxHeldBytes, u("max-held-bytes"))
	countVar(fs, &o.poolSize, "pool-size", socketclient.DefaultPoolSize, u("pool-size"))
	sizeVar(fs, &o.maxReplySize, "max-reply-size", socketclient.DefaultMaxReplySize, u("max-reply-size"))
	boolVar(fs, &o.allowAnyPeer, "allow-any-peer", false, u("allow-any-peer"))
	countVar(fs, &o.limits.Depth, "max-depth", manifest.DefaultDepth, u("max-depth"))
	countVar(fs, &o.limits.NumberLength, "max-number-length", manifest.DefaultNumberLength, u("max-number-length"))
	sizeVar(fs, &o.limits.Size, "max-checked-size", manifest.DefaultSize, u("max-checked-size"))
	countVar(fs, &o.limits.Values, "max-checked-values", manifest.DefaultValues, u("max-checked-values"))
	fs.StringArrayVar(&o.include, "include", nil, u("include"))
	fs.StringArrayVar(&o.exclude, "exclude", nil, u("exclude"))
	boolVar(fs, &o.readOnly, "read-only", false, u("read-only"))
	fs.StringVar(&o.toolMode, "tool-mode", "all", u("tool-mode"))
	fs.StringArrayVar(&o.confirm, "confirm", nil, u("confirm"))
	fs.StringVar(&o.confirmDeny, "confirm-unsupported", "allow", u("confirm-unsupported"))
	fs.StringVar(&o.audit.path, "audit-log", "", u("audit-log"))
	boolVar(fs, &o.audit.values, "audit-values", false, u("audit-values"))
	sizeVar(fs, &o.audit.maxSize, "audit-max-size", audit.DefaultMaxSize, u("audit-max-size"))
	countVar(fs, &o.audit.keep, "audit-keep", audit.DefaultKeep, u("audit-keep"))
	o.http.register(fs, u)
}

// bindEnv sets every flag of cmd the command line left alone from its
// environment variable, when that is set (even to "": TAIRSEACH_PREFIX=""
// means no prefix). A value the flag refuses is a usage error.
func bindEnv(cmd *cobra.Command, getenv func(string) (string, bool)) error {
	for _, s := range slices.Concat(settings, httpSettings) {
		f := cmd.Flags().Lookup(s.flag)
		if f == nil || f.Changed {
			continue
		}
		v, ok := getenv(s.env)
		if !ok {
			continue
		}
		if s.flag == "manifests" {
			if strings.Trim(v, string(filepath.ListSeparator)) == "" {
				// Not the default: whoever set it meant some folder.
				return usageError{fmt.Errorf("%s=%q names no folder: set it to the folders that hold your manifests, or unset it for the default", s.env, v)}
			}
			for _, p := range filepath.SplitList(v) {
				if p == "" {
					continue // a stray separator, as in "a:"
				}
				if err := f.Value.Set(p); err != nil {
					return usageError{fmt.Errorf("%s: %w", s.env, err)}
				}
				f.Changed = true
			}
			continue
		}
		if f.Value.Type() == "bool" && v == "" {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			return usageError{fmt.Errorf("%s=%q: %w", s.env, v, err)}
		}
		f.Changed = true
	}
	return nil
}

// resolve fills in defaults that depend on the machine and checks values.
func (o *options) resolve() error {
	switch o.transport {
	case "stdio":
	case "http":
		if err := o.http.resolve(); err != nil {
			return usageError{err}
		}
	default:
		return usageError{fmt.Errorf("unknown transport %q: use stdio or http", o.transport)}
	}
	switch o.logFormat {
	case "json", "console", "auto":
	default:
		return usageError{fmt.Errorf("unknown log format %q: use json, console or auto", o.logFormat)}
	}
	if _, err := parseLevel(o.logLevel); err != nil {
		return usageError{err}
	}
	if o.toolMode != "all" && o.toolMode != "search" {
		return usageError{fmt.Errorf("unknown tool mode %q: use all or search", o.toolMode)}
	}
	o.include, o.exclude = splitPatterns(o.include), splitPatterns(o.exclude)
	if err := o.filter().Check(); err != nil {
		return usageError{err}
	}
	o.confirm = splitPatterns(o.confirm)
	var err error
	if o.confirmPolicy, err = confirmPolicy(o.confirm, o.confirmDeny); err != nil {
		return usageError{err}
	}
	if o.progress < 0 {
		return usageError{fmt.Errorf("--progress-interval must not be negative, not %s", o.progress)}
	}
	if o.callTimeout <= 0 {
		return usageError{fmt.Errorf("--call-timeout must be positive, not %s", o.callTimeout)}
	}
	for name, v := range map[string]int{"--max-message-size": o.maxMessageSize, "--max-in-flight": o.maxInFlight, "--max-held-bytes": o.maxHeldBytes, "--pool-size": o.poolSize, "--max-reply-size": o.maxReplySize,
		"--max-depth": o.limits.Depth, "--max-number-length": o.limits.NumberLength, "--max-checked-size": o.limits.Size, "--max-checked-values": o.limits.Values} {
		if v <= 0 {
			return usageError{fmt.Errorf("%s must be positive, not %d", name, v)}
		}
	}
	if slices.Contains(o.manifests, "") {
		// The folder "" would be the working folder, watched recursively.
		return usageError{errors.New(`--manifests "" names no folder: give the folder that holds your manifests`)}
	}
	home, _ := os.UserHomeDir()
	if len(o.manifests) == 0 {
		o.manifests = []string{filepath.Join(home, ".tairseach", "manifests")}
	}
	for i, m := range o.manifests {
		o.manifests[i] = expandHome(m, home)
	}
	if o.socket == "" {
		o.socket = defaultSocket(home)
	}
	o.socket = expandHome(o.socket, home)
	return o.audit.resolve(home)
}

// splitPatterns splits comma-separated patterns, as the variables give
// them, and drops empty ones.
func splitPatterns(ps []string) []string {
	var out []string
	for _, p := range ps {
		for q := range strings.SplitSeq(p, ",") {
			if q = strings.TrimSpace(q); q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

func (o *options) filter() registry.Filter {
	return registry.Filter{Include: o.include, Exclude: o.exclude, ReadOnly: o.readOnly}
}

// confirmPolicy reads --confirm's values and --confirm-unsupported's.
func confirmPolicy(values []string, unsupported string) (registry.Confirm, error) {
	var c registry.Confirm
	switch unsupported {
	case "allow":
	case "deny":
		c.DenyUnasked = true
	default:
		return c, fmt.Errorf("--confirm-unsupported is allow or deny, not %q", unsupported)
	}
	for _, v := range values {
		switch v {
		case "destructive":
		case "all":
			c.Mode = registry.ConfirmAll
		case "never":
			c.Mode = registry.ConfirmNever
		default:
			c.Tools = append(c.Tools, v)
		}
	}
	if c.Mode == registry.ConfirmNever && len(values) > 1 {
		return c, fmt.Errorf("--confirm never asks before no tool: it goes alone, not with %q", strings.Join(values, ","))
	}
	return c, c.Check()
}

// defaultSocket is where the Rust bridge looks: ~/.tairseach/tairseach.sock,
// or /tmp/tairseach-<uid>.sock when only that one exists.
func defaultSocket(home string) string {
	primary := filepath.Join(home, ".tairseach", "tairseach.sock")
	fallback := filepath.Join(os.TempDir(), "tairseach-"+strconv.Itoa(os.Getuid())+".sock")
	if _, err := os.Stat(primary); err != nil {
		if _, err := os.Stat(fallback); err == nil {
			return fallback
		}
	}
	return primary
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// usageError marks errors in how the command was invoked (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// requireManifests fails when a manifest folder (or file) to read does
// not exist: for the commands that read them once, a mistyped path must
// not look like a folder without tools. (The server warns instead, and
// watches for the folder to appear.)
func requireManifests(paths []string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s does not exist: point --manifests (or TAIRSEACH_MANIFESTS) at the folder that holds your manifests", p)
		}
	}
	return nil
}
