package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// installOptions are the flags of install and uninstall.
type installOptions struct {
	name          string
	dryRun, force bool
	list          bool
	audit         bool   // add --audit-log with the default path
	url           string // reach a bridge serving HTTP there instead of starting one
}

func newInstallCmd(e *env, opts *options) *cobra.Command {
	var o installOptions
	cmd := &cobra.Command{
		Use:   "install CLIENT | --list",
		Short: "Add the bridge to an MCP client's configuration",
		Long: `install adds a server entry that runs this binary to CLIENT's user configuration
file (one of ` + clientNames() + `), and keeps the rest of the file. The entry carries
the global flags set here, or through their TAIRSEACH_ variables, that differ from their
defaults. The previous file is kept as FILE.bak. See docs/clients.md.

With --url, the entry instead reaches a bridge already serving HTTP
(tairseach-mcp --transport http) at that URL, in the client's own format, with the
bearer token of TAIRSEACH_AUTH_TOKEN or --auth-token-file when one is set; every
client but claude-desktop can. See docs/http.md.`,
		Example: `  tairseach-mcp install claude-desktop
  tairseach-mcp install cursor --socket ~/run/tairseach.sock --dry-run
  tairseach-mcp install vscode --url http://127.0.0.1:8411/mcp
  tairseach-mcp install --list`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			exe, err := executable()
			if err != nil {
				return err
			}
			if o.list {
				if len(args) > 0 {
					return usageError{fmt.Errorf("--list takes no client")}
				}
				m, err := newMachine(e)
				if err != nil {
					return err
				}
				return runList(e.stdout, m, exe, o.name)
			}
			if o.url != "" {
				return installURL(e, opts, args, o, cmd.InheritedFlags())
			}
			m, c, err := target(e, args)
			if err == nil {
				err = checkExecutable(exe)
			}
			if err != nil {
				return err
			}
			entry := serverEntry{Command: exe, Args: serverArgs(cmd.InheritedFlags(), m.home)}
			if o.audit && !cmd.Flags().Changed("audit-log") {
				entry.Args = append(entry.Args, "--audit-log="+defaultAuditLog(m.home))
			}
			return runInstall(e.stdout, m, c, entry, o)
		},
	}
	o.register(cmd.Flags())
	cmd.Flags().BoolVar(&o.force, "force", false, "replace a different server of the same name; write even if the client is not found")
	cmd.Flags().BoolVar(&o.list, "list", false, "show the clients found on this machine and whether the bridge is installed there")
	cmd.Flags().BoolVar(&o.audit, "audit", false, "record every call in ~/.tairseach/audit.log, which every client's bridge shares (adds --audit-log; see 'tairseach-mcp stats')")
	cmd.Flags().StringVar(&o.url, "url", "", "reach the bridge serving HTTP at this URL (http://127.0.0.1:8411/mcp) instead of starting one; with the token of TAIRSEACH_AUTH_TOKEN or --auth-token-file")
	return cmd
}

// installURL installs an entry that reaches the HTTP bridge at o.url.
// The bridge's flags set here are the bridge's business: they are named,
// and not written.
func installURL(e *env, opts *options, args []string, o installOptions, flags *pflag.FlagSet) error {
	if o.audit {
		return usageError{errors.New("--audit goes to the bridge: run the HTTP bridge with --audit-log, and install --url without it")}
	}
	if err := checkURL(o.url); err != nil {
		return usageError{err}
	}
	m, c, err := target(e, args)
	if err != nil {
		return err
	}
	token, err := opts.http.bearerToken()
	if err != nil {
		return err
	}
	var ignored []string
	for _, a := range serverArgs(flags, m.home) {
		if !strings.HasPrefix(a, "--auth-token-file=") {
			ignored = append(ignored, a)
		}
	}
	if len(ignored) > 0 {
		fmt.Fprintf(e.stdout, "Not written (they are the HTTP bridge's flags, set where it runs): %s\n", strings.Join(ignored, " "))
	}
	return runInstall(e.stdout, m, c, urlEntry{url: o.url, token: token}, o)
}

func newUninstallCmd(e *env) *cobra.Command {
	var o installOptions
	cmd := &cobra.Command{
		Use:   "uninstall CLIENT",
		Short: "Remove the bridge from an MCP client's configuration",
		Long: `uninstall removes the bridge's server entry, and nothing else, from CLIENT's user
configuration file. CLIENT is one of ` + clientNames() + `. The previous file is kept as FILE.bak.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, c, err := target(e, args)
			if err != nil {
				return err
			}
			return runUninstall(e.stdout, m, c, o)
		},
	}
	o.register(cmd.Flags())
	return cmd
}

func (o *installOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.name, "name", "tairseach", "name of the server entry")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the change to the entry and write nothing")
}

// target is the machine and the client a command acts on.
func target(e *env, args []string) (machine, mcpClient, error) {
	m, err := newMachine(e)
	if err != nil {
		return m, mcpClient{}, err
	}
	if len(args) == 0 {
		return m, mcpClient{}, usageError{fmt.Errorf("name a client: %s", clientNames())}
	}
	c, err := findClient(args[0])
	return m, c, err
}

// executable is the running binary's absolute path, symbolic links
// resolved: a client starts it from a folder of its own choosing.
func executable() (string, error) {
	p, err := os.Executable()
	if err == nil {
		p, err = filepath.EvalSymlinks(p)
	}
	if err != nil {
		return "", fmt.Errorf("find this binary's path: %w", err)
	}
	return p, nil
}

// checkExecutable refuses a binary that go run built in a temporary
// folder, deleted when it exits.
func checkExecutable(p string) error {
	if filepath.Base(filepath.Dir(p)) == "exe" && strings.Contains(p, "go-build") {
		return fmt.Errorf("this binary is a temporary build by go run (%s) that will be deleted: build it first, for example go build -o ~/.local/bin/tairseach-mcp ./cmd/tairseach-mcp, and run install with that binary", p)
	}
	return nil
}

// pathFlags are the flags whose values are paths, written absolute.
var pathFlags = map[string]bool{"socket": true, "manifests": true, "audit-log": true}

// serverArgs lists the global flags that were set (on the command line or
// through their variables) to something other than their defaults, as
// --name=value. Flags added later are carried without change here.
func serverArgs(fs *pflag.FlagSet, home string) []string {
	var args []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Changed || f.Value.String() == f.DefValue {
			return
		}
		values := []string{f.Value.String()}
		if s, ok := f.Value.(pflag.SliceValue); ok {
			values = s.GetSlice()
		}
		for _, v := range values {
			if pathFlags[f.Name] {
				if abs, err := filepath.Abs(expandHome(v, home)); err == nil {
					v = abs
				}
			}
			if f.Value.Type() == "bool" && v == "true" {
				args = append(args, "--"+f.Name)
			} else {
				args = append(args, "--"+f.Name+"="+v)
			}
		}
	})
	return args
}

// serverEntry is the bridge's entry in a client's file.
type serverEntry struct {
	Type    string   `json:"type,omitzero"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func (s serverEntry) same(v jsontext.Value) bool {
	var old serverEntry
	return json.Unmarshal(v, &old) == nil && old.Command == s.Command && slices.Equal(old.Args, s.Args)
}

func runInstall(w io.Writer, m machine, c mcpClient, entry clientEntry, o installOptions) error {
	entry, err := entry.in(c)
	if err != nil {
		return err
	}
	dir, path := c.paths(m)
	if !c.found(m) && !o.force {
		return fmt.Errorf("%s not found: %s does not exist; start %s once, or pass --force to write %s anyway", c.title, dir, c.title, path)
	}
	f, err := readConfig(c, path)
	if err != nil {
		return err
	}
	if entry.secret() && f.perm&0o077 != 0 {
		// The token is a password to the bridge: only you may read it.
		fmt.Fprintf(w, "%s will hold the bridge's token: its mode becomes 0600 (was %#o).\n", f.path, f.perm)
		f.perm = 0o600
	}
	want, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	old, had := f.servers.get(o.name)
	switch {
	case had && entry.same(old):
		fmt.Fprintf(w, "%s already has %q as given, in %s: nothing to change.\n", c.title, o.name, f.path)
		return nil
	case had && !o.force:
		return fmt.Errorf("%s already has a different server %q in %s:\n%s\npass --force to replace it, or --name to add the bridge under another name", c.title, o.name, f.path, showEntry("  ", o.name, old))
	}
	f.servers.set(o.name, want)
	done := fmt.Sprintf("Added %q to %s", o.name, c.title)
	if had {
		done = fmt.Sprintf("Replaced %q in %s", o.name, c.title)
	}
	return apply(w, c, f, o, done, old, want)
}

func runUninstall(w io.Writer, m machine, c mcpClient, o installOptions) error {
	_, path := c.paths(m)
	f, err := readConfig(c, path)
	if err != nil {
		return err
	}
	old, had := f.servers.get(o.name)
	if !had {
		fmt.Fprintf(w, "%s has no server %q in %s: nothing to remove.\n", c.title, o.name, f.path)
		return nil
	}
	f.servers.remove(o.name)
	return apply(w, c, f, o, fmt.Sprintf("Removed %q from %s", o.name, c.title), old, nil)
}

// apply shows the change to the entry (--dry-run) or writes it.
func apply(w io.Writer, c mcpClient, f *configFile, o installOptions, done string, before, after jsontext.Value) error {
	data, err := f.encode(c)
	if err != nil {
		return err
	}
	if o.dryRun {
		fmt.Fprintf(w, "Would change %s:\n", f.path)
		if before != nil {
			fmt.Fprintln(w, showEntry("- ", o.name, before))
		}
		if after != nil {
			fmt.Fprintln(w, showEntry("+ ", o.name, after))
		}
		fmt.Fprintln(w, "Nothing written (--dry-run).")
		return nil
	}
	backup, err := f.write(data)
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	fmt.Fprintf(w, "%s: %s", done, f.path)
	if backup != "" {
		fmt.Fprintf(w, " (previous file kept as %s)", backup)
	}
	fmt.Fprintf(w, ".\nRestart %s to load the change.\n", c.title)
	return nil
}

// showEntry indents an entry, each line after prefix, its credentials
// hidden.
func showEntry(prefix, name string, v jsontext.Value) string {
	v = redact(v).Clone()
	_ = v.Indent(jsontext.WithIndent("  ")) // v was decoded: valid
	lines := strings.Split(fmt.Sprintf("%q: %s", name, v), "\n")
	return prefix + strings.Join(lines, "\n"+prefix)
}

// runList shows the clients found on this machine and the state of the
// bridge's entry in each.
func runList(w io.Writer, m machine, exe, name string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tCONFIG\tBRIDGE")
	var missing []string
	for _, c := range mcpClients {
		if !c.found(m) {
			missing = append(missing, c.name)
			continue
		}
		_, path := c.paths(m)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.name, path, entryState(c, path, name, exe))
	}
	if len(missing) == len(mcpClients) {
		fmt.Fprintf(w, "No clients found (looked for %s).\n", clientNames())
		return nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprint(w, plural(len(mcpClients)-len(missing), "client")+" found")
	if len(missing) > 0 {
		fmt.Fprintf(w, "; not found: %s", strings.Join(missing, ", "))
	}
	fmt.Fprintln(w, ".")
	return nil
}

func entryState(c mcpClient, path, name, exe string) string {
	f, err := readConfig(c, path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	v, ok := f.servers.get(name)
	if !ok {
		return "not installed"
	}
	var u urlEntry
	if json.Unmarshal(v, &u) == nil && u.where() != "" {
		return "installed, reaches " + u.where()
	}
	var e serverEntry
	if json.Unmarshal(v, &e) != nil || e.Command == "" {
		return fmt.Sprintf("%q is neither a command nor a URL entry", name)
	}
	real, err := resolveCommand(e.Command)
	switch {
	case err != nil:
		return "installed, but its binary is missing: " + e.Command
	case real == exe:
		return "installed (this binary)"
	}
	return "installed, another binary: " + e.Command
}

// resolveCommand finds the binary a client's entry runs, as the client
// would: a bare name on PATH, then symbolic links followed.
func resolveCommand(cmd string) (string, error) {
	if p, err := exec.LookPath(cmd); err == nil {
		cmd = p
	}
	return filepath.EvalSymlinks(cmd)
}
