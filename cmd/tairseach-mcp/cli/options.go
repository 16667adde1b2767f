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

	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/registry/clients"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// options are the settings of the bridge, which the commands share. Each
// has a flag and an environment variable; a flag wins over the variable,
// which wins over the default. A command takes the flags of the settings
// it uses (see register); the others keep their defaults.
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
	askTimeout     time.Duration
	maxPendingAsks int
	maxMessageSize int
	maxInFlight    int
	maxHeldBytes   int
	tasks          taskOptions
	poolSize       int
	maxReplySize   int
	allowAnyPeer   bool
	limits         manifest.Limits
	include        []string
	exclude        []string
	readOnly       bool
	toolMode       string
	searchLearn    bool
	audit          auditOptions
	confirm        []string
	confirmDeny    string           // --confirm-unsupported
	confirmPolicy  registry.Confirm // of confirm and confirmDeny, made by resolve
	confirmPage    bool             // --confirm-unsupported page: the owner answers on the console
	ui             string           // --ui: where a bridge over stdio serves the owner's console
	clients        string           // --clients: the clients file
	client         string           // --client: the named client a bridge over stdio serves
	logLevelSet    bool             // --log-level or its variable was given
	fromEnv        []string         // the flags set from their variables
	http           httpOptions
}

// newOptions returns the settings at their defaults, the flag of each
// registered on a set of its own: a command that does not take a flag
// reads its default.
func newOptions() *options {
	o := &options{}
	o.register(pflag.NewFlagSet("defaults", pflag.ContinueOnError), allFlags)
	return o
}

// group is a set of settings that commands take together.
type group uint

const (
	catalogFlags group = 1 << iota // which manifests are read, and the names clients see
	filterFlags                    // which tools, resources and prompts clients see
	policyFlags                    // how the tools are listed, and which ask the user first
	backendFlags                   // the backend and the calls to it
	checkFlags                     // what arguments and results a schema check takes on
	logFlags                       // the stderr log
	sessionFlags                   // a client's session: its messages, its calls, what it is told
	auditFlags                     // the audit log
	clientFlags                    // the clients file, and the named client a bridge over stdio serves
	consoleFlags                   // the owner's console of a bridge over stdio
	taskFlags                      // tasks, calls that outlive their request: their bounds
	httpFlags                      // --transport, and the HTTP bridge's listener, security and limits

	// entryFlags are the settings of a bridge a client starts over
	// stdio: what its entry in the client's file may carry.
	entryFlags = catalogFlags | filterFlags | policyFlags | backendFlags | checkFlags | logFlags | sessionFlags | auditFlags | taskFlags | clientFlags | consoleFlags
	allFlags   = entryFlags | httpFlags
)

// setting describes one flag and its variable, for registration and help.
type setting struct {
	group            group
	flag, env, usage string
}

var settings = []setting{
	{catalogFlags, "manifests", "TAIRSEACH_MANIFESTS", "manifest folder, read recursively; repeat for several (the variable takes a path list) (default ~/.tairseach/manifests)"},
	{catalogFlags, "prefix", "TAIRSEACH_PREFIX", `prefix of client-visible tool names, <prefix>_<name>; "" for none`},
	{filterFlags, "include", "TAIRSEACH_INCLUDE", "serve only tools whose client name (tairseach_mail_*) or manifest name (mail.*) matches this glob (prompts likewise, resources by URI or name); repeatable, or comma-separated"},
	{filterFlags, "exclude", "TAIRSEACH_EXCLUDE", "do not serve tools whose client or manifest name matches this glob (prompts and resources likewise; wins over --include); repeatable, or comma-separated"},
	{filterFlags, "read-only", "TAIRSEACH_READ_ONLY", "serve only tools whose annotations say readOnlyHint: true, and resources whose backend method such a tool has"},
	{policyFlags, "tool-mode", "TAIRSEACH_TOOL_MODE", "all: list every tool; search: list only <prefix>_find_tools and <prefix>_call_tool, which find and call the others"},
	{policyFlags, "search-learn", "TAIRSEACH_SEARCH_LEARN", "with --tool-mode search and --audit-log: tools this user calls often, or right after finding them, win find_tools' near-ties; false turns it off"},
	{policyFlags, "confirm", "TAIRSEACH_CONFIRM", "which tools ask the user before they run: destructive (tools annotated destructiveHint: true, and those whose manifest sets confirm), all, never, or globs of tool names asked in addition; repeatable, or comma-separated"},
	{policyFlags, "confirm-unsupported", "TAIRSEACH_CONFIRM_UNSUPPORTED", "when the client cannot ask the user (no elicitation): allow runs such tools unconfirmed (logged once per tool), deny refuses them, page waits for the owner to answer on the console (needs --transport http or --ui)"},
	{backendFlags, "socket", "TAIRSEACH_SOCKET", "backend Unix socket (default ~/.tairseach/tairseach.sock, or /tmp/tairseach-<uid>.sock when only that exists)"},
	{backendFlags, "call-timeout", "TAIRSEACH_CALL_TIMEOUT", "longest wait for one backend call (Claude Desktop gives up at 60s)"},
	{backendFlags, "pool-size", "TAIRSEACH_POOL_SIZE", "most connections to the backend"},
	{backendFlags, "max-reply-size", "TAIRSEACH_MAX_REPLY_SIZE", "largest backend reply (bytes, or with a unit: 32MiB, 512KiB)"},
	{backendFlags, "allow-any-peer", "TAIRSEACH_ALLOW_ANY_PEER", "skip checking that the socket and the backend belong to the current user"},
	{checkFlags, "max-depth", "TAIRSEACH_MAX_DEPTH", "deepest nesting of arguments and results checked against a schema"},
	{checkFlags, "max-number-length", "TAIRSEACH_MAX_NUMBER_LENGTH", "longest number (in characters) in arguments and results checked against a schema"},
	{checkFlags, "max-checked-size", "TAIRSEACH_MAX_CHECKED_SIZE", "largest arguments or result checked against a schema (bytes, or with a unit: 8MiB)"},
	{checkFlags, "max-checked-values", "TAIRSEACH_MAX_CHECKED_VALUES", "most values (strings, numbers, members, elements) in arguments or a result checked against a schema"},
	{logFlags, "log-level", "TAIRSEACH_LOG_LEVEL", "stderr log level: trace, debug, info, warn, error"},
	{logFlags, "log-format", "TAIRSEACH_LOG_FORMAT", "stderr log format: json, console, or auto (console on a terminal)"},
	{sessionFlags, "instructions", "TAIRSEACH_INSTRUCTIONS", "instructions sent to clients with the server's capabilities"},
	{sessionFlags, "no-watch", "TAIRSEACH_NO_WATCH", "do not watch manifest folders for changes"},
	{sessionFlags, "progress-interval", "TAIRSEACH_PROGRESS_INTERVAL", "period of notifications/progress heartbeats for calls that carry a progressToken; 0 turns them off"},
	{sessionFlags, "ask-timeout", "TAIRSEACH_ASK_TIMEOUT", "longest wait for a person or the client's model: a confirmation, the backend's questions, sampling, roots (and the life of a 2026-07-28 requestState); a call's --call-timeout stops meanwhile"},
	{sessionFlags, "max-pending-asks", "TAIRSEACH_MAX_PENDING_ASKS", "most calls whose backend waits for the client's answers at once; past it a backend's question is refused at once (0: half of --pool-size)"},
	{sessionFlags, "max-message-size", "TAIRSEACH_MAX_MESSAGE_SIZE", "largest incoming MCP message (bytes, or with a unit: 32MiB, 512KiB)"},
	{sessionFlags, "max-in-flight", "TAIRSEACH_MAX_IN_FLIGHT", "most tool calls running at once; as many more wait in line, and past that stdin is not read (backpressure)"},
	{sessionFlags, "max-held-bytes", "TAIRSEACH_MAX_HELD_BYTES", "most bytes held on behalf of requests: arguments, backend replies being read, responses and notifications not yet written; past it the bridge reads no more requests or replies until there is room (bytes, or with a unit: 64MiB)"},
	{auditFlags, "audit-log", "TAIRSEACH_AUDIT_LOG", "record every tool call, one JSON line each, in this file, which bridge processes share (off by default; read it with 'tairseach-mcp stats')"},
	{auditFlags, "audit-values", "TAIRSEACH_AUDIT_VALUES", "also record the arguments' values in the audit log, secrets redacted by name and schema"},
	{auditFlags, "audit-max-size", "TAIRSEACH_AUDIT_MAX_SIZE", "size at which the audit log is rotated (bytes, or with a unit: 10MiB)"},
	{auditFlags, "audit-keep", "TAIRSEACH_AUDIT_KEEP", "rotated audit logs kept beside it (PATH.1 the newest)"},
	{taskFlags, "task-timeout", "TAIRSEACH_TASK_TIMEOUT", "longest a task's backend call may take (instead of --call-timeout): a call runs as a task when its tool's manifest allows it and the client can take one"},
	{taskFlags, "max-tasks", "TAIRSEACH_MAX_TASKS", "most tasks kept at once, running or ended and kept for their results; past it a tool whose taskSupport is optional runs as an ordinary call, one that requires tasks is refused"},
	{taskFlags, "max-tasks-per-owner", "TAIRSEACH_MAX_TASKS_PER_OWNER", "most tasks kept at once for one owner (a named client, a token's holder, the local user, the process)"},
	{taskFlags, "max-task-ttl", "TAIRSEACH_MAX_TASK_TTL", "longest a task is kept from its creation, with its result; a client may ask for less, and a task still running then is cancelled"},
	{taskFlags, "max-task-bytes", "TAIRSEACH_MAX_TASK_BYTES", "most bytes of results of tasks kept, in all, counted against the byte budget (at most half of it); a result that does not fit fails its task (bytes, or with a unit: 16MiB)"},
	{clientFlags, "clients", "TAIRSEACH_CLIENTS", "the clients file: named clients, each with its token (over HTTP) and its policy (see 'tairseach-mcp clients'); with one, every HTTP request needs a client's token or the owner's (default ~/.tairseach/clients.json)"},
	{clientFlags, "client", "TAIRSEACH_CLIENT", "over stdio: serve the named client of the clients file, with its policy (what a desktop client's entry names; over HTTP its token selects it)"},
	{consoleFlags, "ui", "TAIRSEACH_UI", "over stdio: serve the owner's console on this loopback address (127.0.0.1:0 for any free port); over HTTP it is at /ui on the listener"},
	{httpFlags, "transport", "TAIRSEACH_TRANSPORT", "MCP transport: stdio (what desktop clients start), or http (Streamable HTTP, one bridge for many clients; see --listen)"},
	{httpFlags, "listen", "TAIRSEACH_LISTEN", "with --transport http: where to listen, 127.0.0.1:PORT, [::1]:PORT, HOST:0 for any free port, or unix:PATH for a Unix socket"},
	{httpFlags, "allowed-origins", "TAIRSEACH_ALLOWED_ORIGINS", "browser origins allowed besides loopback ones, exactly as sent (https://app.example); repeatable, or comma-separated"},
	{httpFlags, "allowed-hosts", "TAIRSEACH_ALLOWED_HOSTS", "Host header values allowed besides loopback names and the listen address (bridge.lan:8411); repeatable, or comma-separated"},
	{httpFlags, "auth-token-file", "TAIRSEACH_AUTH_TOKEN_FILE", "file holding the bearer token clients must send (or set TAIRSEACH_AUTH_TOKEN); required off loopback"},
	{httpFlags, "tls-cert", "TAIRSEACH_TLS_CERT", "TLS certificate file (PEM); with --tls-key, serve HTTPS"},
	{httpFlags, "tls-key", "TAIRSEACH_TLS_KEY", "TLS private key file (PEM)"},
	{httpFlags, "insecure-http", "TAIRSEACH_INSECURE_HTTP", "allow plain HTTP on an address other than loopback (the token then travels in clear)"},
	{httpFlags, "max-sessions", "TAIRSEACH_MAX_SESSIONS", "most HTTP sessions at once; when full, the one idle the longest is ended (never a busy one: then 503)"},
	{httpFlags, "session-timeout", "TAIRSEACH_SESSION_TIMEOUT", "an HTTP session no request has used this long (an open GET stream is use) is ended, and calls it left are cancelled"},
	{httpFlags, "max-total-in-flight", "TAIRSEACH_MAX_TOTAL_IN_FLIGHT", "most tool calls running at once over all HTTP sessions"},
	{httpFlags, "max-total-held-bytes", "TAIRSEACH_MAX_TOTAL_HELD_BYTES", "most bytes held for requests over all HTTP sessions (see --max-held-bytes, which bounds each)"},
	{httpFlags, "max-body-size", "TAIRSEACH_MAX_BODY_SIZE", "largest HTTP request body (bytes, or with a unit: 4MiB)"},
	{httpFlags, "header-timeout", "TAIRSEACH_HEADER_TIMEOUT", "longest time to read a request's headers"},
	{httpFlags, "idle-timeout", "TAIRSEACH_IDLE_TIMEOUT", "an idle keep-alive connection is closed after this long"},
	{httpFlags, "stall-timeout", "TAIRSEACH_STALL_TIMEOUT", "a client that takes longer than this to read part of a response loses that response's stream"},
	{httpFlags, "max-streams", "TAIRSEACH_MAX_STREAMS", "most subscriptions/listen streams (protocol 2026-07-28) open at once over all HTTP clients"},
	{httpFlags, "max-connections", "TAIRSEACH_MAX_CONNECTIONS", "most HTTP connections open at once; past it a new connection gets 503 and is closed"},
}

// settingOf returns the setting of the flag name, if it is one.
func settingOf(name string) (setting, bool) {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.flag == name })
	if i < 0 {
		return setting{}, false
	}
	return settings[i], true
}

// register adds to fs the flags of the settings in groups, and of those
// named, each bound to its field at its default.
func (o *options) register(fs *pflag.FlagSet, groups group, names ...string) {
	for _, s := range settings {
		if s.group&groups != 0 || slices.Contains(names, s.flag) {
			o.add(fs, s.flag, fmt.Sprintf("%s (env %s)", s.usage, s.env))
		}
	}
}

// add adds the flag of the setting name to fs.
func (o *options) add(fs *pflag.FlagSet, name, usage string) {
	switch name {
	case "transport":
		fs.StringVar(&o.transport, name, "stdio", usage)
	case "socket":
		fs.StringVar(&o.socket, name, "", usage)
	case "manifests":
		fs.StringArrayVar(&o.manifests, name, nil, usage)
	case "prefix":
		fs.StringVar(&o.prefix, name, "tairseach", usage)
	case "call-timeout":
		durationVar(fs, &o.callTimeout, name, registry.DefaultCallTimeout, usage)
	case "log-level":
		fs.StringVar(&o.logLevel, name, "info", usage)
	case "log-format":
		fs.StringVar(&o.logFormat, name, "auto", usage)
	case "instructions":
		fs.StringVar(&o.instructions, name, "", usage)
	case "no-watch":
		boolVar(fs, &o.noWatch, name, false, usage)
	case "progress-interval":
		durationVar(fs, &o.progress, name, protocol.DefaultProgressInterval, usage)
	case "ask-timeout":
		durationVar(fs, &o.askTimeout, name, protocol.DefaultAskTimeout, usage)
	case "max-pending-asks":
		countVar(fs, &o.maxPendingAsks, name, 0, usage)
	case "max-message-size":
		sizeVar(fs, &o.maxMessageSize, name, protocol.DefaultMaxMessageSize, usage)
	case "max-in-flight":
		countVar(fs, &o.maxInFlight, name, protocol.DefaultMaxInFlight, usage)
	case "max-held-bytes":
		sizeVar(fs, &o.maxHeldBytes, name, protocol.DefaultMaxHeldBytes, usage)
	case "pool-size":
		countVar(fs, &o.poolSize, name, socketclient.DefaultPoolSize, usage)
	case "max-reply-size":
		sizeVar(fs, &o.maxReplySize, name, socketclient.DefaultMaxReplySize, usage)
	case "allow-any-peer":
		boolVar(fs, &o.allowAnyPeer, name, false, usage)
	case "max-depth":
		countVar(fs, &o.limits.Depth, name, manifest.DefaultDepth, usage)
	case "max-number-length":
		countVar(fs, &o.limits.NumberLength, name, manifest.DefaultNumberLength, usage)
	case "max-checked-size":
		sizeVar(fs, &o.limits.Size, name, manifest.DefaultSize, usage)
	case "max-checked-values":
		countVar(fs, &o.limits.Values, name, manifest.DefaultValues, usage)
	case "include":
		fs.StringArrayVar(&o.include, name, nil, usage)
	case "exclude":
		fs.StringArrayVar(&o.exclude, name, nil, usage)
	case "read-only":
		boolVar(fs, &o.readOnly, name, false, usage)
	case "tool-mode":
		fs.StringVar(&o.toolMode, name, "all", usage)
	case "search-learn":
		boolVar(fs, &o.searchLearn, name, true, usage)
	case "confirm":
		fs.StringArrayVar(&o.confirm, name, nil, usage)
	case "confirm-unsupported":
		fs.StringVar(&o.confirmDeny, name, "allow", usage)
	case "task-timeout":
		durationVar(fs, &o.tasks.timeout, name, registry.DefaultTaskTimeout, usage)
	case "max-tasks":
		countVar(fs, &o.tasks.max, name, protocol.DefaultMaxTasks, usage)
	case "max-tasks-per-owner":
		countVar(fs, &o.tasks.maxPerOwner, name, protocol.DefaultMaxTasksPerOwner, usage)
	case "max-task-ttl":
		durationVar(fs, &o.tasks.maxTTL, name, protocol.DefaultMaxTaskTTL, usage)
	case "max-task-bytes":
		sizeVar(fs, &o.tasks.maxBytes, name, protocol.DefaultMaxTaskBytes, usage)
	case "audit-log":
		fs.StringVar(&o.audit.path, name, "", usage)
	case "audit-values":
		boolVar(fs, &o.audit.values, name, false, usage)
	case "audit-max-size":
		sizeVar(fs, &o.audit.maxSize, name, audit.DefaultMaxSize, usage)
	case "audit-keep":
		countVar(fs, &o.audit.keep, name, audit.DefaultKeep, usage)
	case "ui":
		fs.StringVar(&o.ui, name, "", usage)
	case "clients":
		fs.StringVar(&o.clients, name, "", usage)
	case "client":
		fs.StringVar(&o.client, name, "", usage)
	default:
		if !o.http.add(fs, name, usage) {
			panic("cli: no setting " + name)
		}
	}
}

// bindEnv sets every flag of fs the command line left alone from its
// environment variable, when that is set (even to "": TAIRSEACH_PREFIX=""
// means no prefix), and returns the flags it set. Such a flag is not
// Changed: that says what the command line gave. A value the flag
// refuses is a usage error.
func bindEnv(fs *pflag.FlagSet, getenv func(string) (string, bool)) ([]string, error) {
	var set []string
	for _, s := range settings {
		f := fs.Lookup(s.flag)
		if f == nil || f.Changed || isOwn(f) {
			continue
		}
		v, ok := getenv(s.env)
		if !ok {
			continue
		}
		if s.flag == "manifests" {
			if strings.Trim(v, string(filepath.ListSeparator)) == "" {
				// Not the default: whoever set it meant some folder.
				return nil, usageError{fmt.Errorf("%s=%q names no folder: set it to the folders that hold your manifests, or unset it for the default", s.env, v)}
			}
			for _, p := range filepath.SplitList(v) {
				if p == "" {
					continue // a stray separator, as in "a:"
				}
				if err := f.Value.Set(p); err != nil {
					return nil, usageError{fmt.Errorf("%s: %w", s.env, err)}
				}
			}
			set = append(set, s.flag)
			continue
		}
		if f.Value.Type() == "bool" && v == "" {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			return nil, usageError{fmt.Errorf("%s=%q: %w", s.env, v, err)}
		}
		set = append(set, s.flag)
	}
	return set, nil
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
	o.confirmPage = o.confirmDeny == "page"
	if err := o.resolveUI(); err != nil {
		return usageError{err}
	}
	if o.progress < 0 {
		return usageError{fmt.Errorf("--progress-interval must not be negative, not %s", o.progress)}
	}
	if o.callTimeout <= 0 {
		return usageError{fmt.Errorf("--call-timeout must be positive, not %s", o.callTimeout)}
	}
	if o.askTimeout <= 0 {
		return usageError{fmt.Errorf("--ask-timeout must be positive, not %s", o.askTimeout)}
	}
	if err := o.tasks.check(); err != nil {
		return usageError{err}
	}
	if o.maxPendingAsks < 0 {
		return usageError{fmt.Errorf("--max-pending-asks must not be negative, not %d", o.maxPendingAsks)}
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
	if err := o.resolveClients(home); err != nil {
		return err
	}
	return o.audit.resolve(home)
}

// resolveClients fills in the clients file's default path and checks
// --client.
func (o *options) resolveClients(home string) error {
	if o.clients == "" {
		o.clients = defaultClientsFile(home)
	}
	o.clients = expandHome(o.clients, home)
	if o.client == "" {
		return nil
	}
	if o.transport == "http" {
		return usageError{errors.New("--client names the client a bridge over stdio serves; over HTTP each client's token selects it")}
	}
	if err := clients.CheckName(o.client); err != nil {
		return usageError{fmt.Errorf("--client: %w", err)}
	}
	return nil
}

// taskOptions are the bounds of tasks.
type taskOptions struct {
	timeout, maxTTL  time.Duration
	max, maxPerOwner int
	maxBytes         int
}

func (t *taskOptions) check() error {
	for name, d := range map[string]time.Duration{"--task-timeout": t.timeout, "--max-task-ttl": t.maxTTL} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive, not %s", name, d)
		}
	}
	for name, v := range map[string]int{"--max-tasks": t.max, "--max-tasks-per-owner": t.maxPerOwner, "--max-task-bytes": t.maxBytes} {
		if v <= 0 {
			return fmt.Errorf("%s must be positive, not %d", name, v)
		}
	}
	return nil
}

// defaultClientsFile is where the clients file is unless --clients says.
func defaultClientsFile(home string) string { return filepath.Join(home, ".tairseach", "clients.json") }

// ownAnnotation marks a command's own flag that has the name of a
// setting, such as clients add's --read-only: it is not that setting, and
// its variable does not set it.
const ownAnnotation = "tairseach-own"

// own marks the flag name of fs as the command's own (see ownAnnotation).
func own(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, ownAnnotation, []string{"true"}) // the flag was just added
}

func isOwn(f *pflag.Flag) bool { return f.Annotations[ownAnnotation] != nil }

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
	case "allow", "page": // page: the server asks the owner (protocol.Server.Owner)
	case "deny":
		c.DenyUnasked = true
	default:
		return c, fmt.Errorf("--confirm-unsupported is allow, deny or page, not %q", unsupported)
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
