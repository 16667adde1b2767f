package cli

// The doctor command and its report, and its checks of the backend, the
// manifests and the tool names; doctor_clients.go and doctor_session.go
// hold the others.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
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

// doctorOptions are doctor's flags and what it starts for the purity check.
type doctorOptions struct {
	asJSON bool
	name   string   // the bridge's entry in clients' files
	exe    string   // the binary to start as a client would: this one
	args   []string // its flags: those given to doctor; it inherits the variables
}

func newDoctorCmd(e *env, opts *options) *cobra.Command {
	d := doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the setup: backend socket, manifests, tool list, client configs, stdout",
		Long: `doctor checks what a working setup needs, one line each (✓ ok, ! warning, ✗ failure,
- information) with the fix to apply: the backend's socket, the manifest folders, the
client-visible tool names, the size of the tool list against the limits of common
clients, the bridge's entry in each MCP client found on this machine, the named clients
of the clients file (those whose policy hides every tool, and those no installed config
uses), the audit log, the owner's consoles of the bridges running (with the addresses that open
them), and that stdout carries nothing but MCP messages (it starts this binary with the same flags,
as a client would, and runs a short session). The exit status is 1 when a check fails.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := executable()
			if err != nil {
				return err
			}
			home, _ := os.UserHomeDir()
			d.exe, d.args = exe, serverArgs(cmd.Flags(), home)
			return runDoctor(cmd.Context(), e, opts, d)
		},
	}
	opts.register(cmd.Flags(), entryFlags) // as a client starts the bridge, over stdio
	cmd.Flags().BoolVar(&d.asJSON, "json", false, "print the checks as JSON")
	cmd.Flags().StringVar(&d.name, "name", "tairseach", "name of the bridge's entry in clients' files")
	return cmd
}

func runDoctor(ctx context.Context, e *env, opts *options, d doctorOptions) error {
	reg := newRegistry(opts, nil, nil, nil, nil)
	snap := reg.Snapshot()
	tr := runSession(ctx, d.exe, d.args, nil)
	rs := []result{checkSocket(ctx, opts)}
	rs = append(rs, checkManifests(opts.manifests, snap)...)
	rs = append(rs, checkNames(opts.prefix, snap.Entries), checkConfirm(opts, snap.Entries))
	rs = append(rs, checkToolList(tr.response("tools/list"))...)
	m, err := newMachine(e)
	if err != nil {
		rs = append(rs, result{"clients", statusFail, err.Error(), "set it to your home folder"})
	} else {
		rs = append(rs, checkClients(ctx, m, d.exe, d.name)...)
		rs = append(rs, checkNamedClients(opts.clients, opts.client, reg, m, d.name)...)
	}
	home, ok := e.getenv("HOME")
	if !ok {
		home, _ = os.UserHomeDir()
	}
	rs = append(rs, checkAudit(opts.audit), checkConsoles(home), checkSession(tr))
	failed := false
	for i, r := range rs {
		rs[i].Message, rs[i].Fix = safetext.Line(r.Message), safetext.Line(r.Fix)
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
