package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// installOptions are the flags of install and uninstall.
type installOptions struct {
	clientconfig.Options
	list  bool
	audit bool   // add --audit-log with the default path
	url   string // reach a bridge serving HTTP there instead of starting one
	yes   bool   // with --url and --client: rotate the client's token without asking
}

func newInstallCmd(e *env, opts *options) *cobra.Command {
	var o installOptions
	cmd := &cobra.Command{
		Use:   "install CLIENT | --list",
		Short: "Add the bridge to an MCP client's configuration",
		Long: `install adds a server entry that runs this binary to CLIENT's user configuration
file (one of ` + clientNames() + `), and keeps the rest of the file. The entry carries
the flags given here that differ from their defaults, those of a bridge a client starts
over stdio; their TAIRSEACH_ variables are not written, as the client does not see them.
The previous file is kept as FILE.bak. See docs/clients.md.

With --url, the entry instead reaches a bridge already serving HTTP
(tairseach-mcp --transport http) at that URL, in the client's own format, with the
bearer token of TAIRSEACH_AUTH_TOKEN or --auth-token-file when one is set; every
client but claude-desktop can. See docs/http.md.

With --client NAME, the entry is that named client's (see 'tairseach-mcp clients'):
a bridge started over stdio gets --client NAME, and serves NAME's policy; with --url,
NAME's token is replaced by a new one (after asking, unless --yes), which the entry
carries.`,
		Example: `  tairseach-mcp install claude-desktop
  tairseach-mcp install cursor --socket ~/run/tairseach.sock --dry-run
  tairseach-mcp install vscode --url http://127.0.0.1:8411/mcp
  tairseach-mcp install claude-desktop --client claude-desktop
  tairseach-mcp install cursor --url http://127.0.0.1:8411/mcp --client cursor
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
				return clientconfig.List(e.stdout, m, exe, o.Name)
			}
			if o.url != "" {
				return installURL(e, opts, args, o, cmd.Flags())
			}
			return installCommand(e, opts, args, o, exe, cmd.Flags())
		},
	}
	opts.register(cmd.Flags(), entryFlags, "auth-token-file")
	cmd.Flags().Lookup("auth-token-file").Usage = "with --url: file holding the bearer token the entry sends (or set TAIRSEACH_AUTH_TOKEN) (env TAIRSEACH_AUTH_TOKEN_FILE)"
	o.register(cmd.Flags())
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace a different server of the same name; write even if the client is not found")
	cmd.Flags().BoolVar(&o.list, "list", false, "show the clients found on this machine and whether the bridge is installed there")
	cmd.Flags().BoolVar(&o.audit, "audit", false, "record every call in ~/.tairseach/audit.log, which every client's bridge shares (adds --audit-log; see 'tairseach-mcp stats')")
	cmd.Flags().StringVar(&o.url, "url", "", "reach the bridge serving HTTP at this URL (http://127.0.0.1:8411/mcp) instead of starting one; with the token of TAIRSEACH_AUTH_TOKEN or --auth-token-file")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "with --url and --client: replace the client's token without asking")
	cmd.Flags().Lookup("client").Usage = "the named client the entry is (see 'tairseach-mcp clients'): over stdio the bridge serves its policy; with --url, its token is replaced and written into the entry (env TAIRSEACH_CLIENT)"
	return cmd
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
			return clientconfig.Uninstall(e.stdout, m, c, o.Options)
		},
	}
	o.register(cmd.Flags())
	return cmd
}

func (o *installOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.Name, "name", "tairseach", "name of the server entry")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the change to the entry and write nothing")
}

// target is the machine and the client a command acts on.
func target(e *env, args []string) (clientconfig.Machine, clientconfig.Client, error) {
	m, err := newMachine(e)
	if err != nil {
		return m, clientconfig.Client{}, err
	}
	if len(args) == 0 {
		return m, clientconfig.Client{}, usageError{fmt.Errorf("name a client: %s", clientNames())}
	}
	c, err := findClient(args[0])
	return m, c, err
}

// newMachine is this machine, as e's environment describes it.
func newMachine(e *env) (clientconfig.Machine, error) {
	return clientconfig.NewMachine(func(k string) string { v, _ := e.getenv(k); return v })
}

// findClient accepts a client's name as typed, ignoring case and
// separators (VSCode, claude_desktop); otherwise it suggests the nearest.
func findClient(name string) (clientconfig.Client, error) {
	for _, c := range clientconfig.Clients() {
		if fold(c.Name) == fold(name) {
			return c, nil
		}
	}
	return clientconfig.Client{}, usageError{fmt.Errorf("unknown client %q%s; the clients are %s", name, didYouMean(suggest(name, clientconfig.Names())), clientNames())}
}

func clientNames() string { return strings.Join(clientconfig.Names(), ", ") }

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
var pathFlags = map[string]bool{"socket": true, "manifests": true, "audit-log": true, "clients": true}

// serverArgs lists the settings of a bridge over stdio that the command
// line set to something other than their defaults, as --name=value: not
// the command's own flags, nor the HTTP bridge's, nor what came from a
// variable. Flags added later are carried without change here.
func serverArgs(fs *pflag.FlagSet, home string) []string {
	var args []string
	fs.VisitAll(func(f *pflag.Flag) {
		if s, ok := settingOf(f.Name); !ok || s.group&entryFlags == 0 || !f.Changed || f.Value.String() == f.DefValue {
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

// installCommand installs an entry that starts exe, this binary, with
// the settings that flags has from the command line. A client does not
// see this shell's variables: those set are named, and not written.
func installCommand(e *env, opts *options, args []string, o installOptions, exe string, flags *pflag.FlagSet) error {
	if flags.Changed("auth-token-file") {
		return usageError{errors.New("--auth-token-file goes with --url: a bridge the client starts over stdio takes no token")}
	}
	m, c, err := target(e, args)
	if err == nil {
		err = checkExecutable(exe)
	}
	if err != nil {
		return err
	}
	if opts.client != "" {
		// The bridge would refuse to start without it.
		if _, err := clientsFileWith(opts.clients, opts.client); err != nil {
			return err
		}
	}
	entry := clientconfig.CommandEntry{Command: exe, Args: serverArgs(flags, m.Home)}
	if o.audit && !flags.Changed("audit-log") {
		entry.Args = append(entry.Args, "--audit-log="+defaultAuditLog(m.Home))
	}
	var vars []string
	for _, name := range opts.fromEnv {
		if s, _ := settingOf(name); s.group&entryFlags != 0 {
			vars = append(vars, s.env)
		}
	}
	if len(vars) > 0 {
		fmt.Fprintf(e.stdout, "Not written (variables of this shell, which the client does not see; give install their flags to write them): %s\n", strings.Join(vars, " "))
	}
	return clientconfig.Install(e.stdout, m, c, entry, o.Options)
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
	if opts.client != "" {
		if flags.Changed("auth-token-file") {
			return usageError{errors.New("--client writes the named client's token, --auth-token-file the owner's: give one of them")}
		}
		return installClientURL(e, opts, m, c, o, flags)
	}
	token, err := opts.http.bearerToken()
	if err != nil {
		return err
	}
	if ignored := bridgeArgs(flags, m.Home); len(ignored) > 0 {
		fmt.Fprintf(e.stdout, "Not written (they are the HTTP bridge's flags, set where it runs): %s\n", strings.Join(ignored, " "))
	}
	return clientconfig.Install(e.stdout, m, c, clientconfig.NewURLEntry(o.url, token), o.Options)
}

// bridgeArgs are serverArgs less the named client's, which install --url
// takes for itself.
func bridgeArgs(flags *pflag.FlagSet, home string) []string {
	return slices.DeleteFunc(serverArgs(flags, home), func(a string) bool {
		return strings.HasPrefix(a, "--client=") || strings.HasPrefix(a, "--clients=")
	})
}

// installClientURL installs an entry that reaches the HTTP bridge at
// o.url as the named client opts.client, with a new token: the file
// keeps only its tokens' hashes, so the one the client has cannot be
// written. The token is replaced once the entry is written (asking
// first, unless --yes), so that a refusal leaves both as they were.
func installClientURL(e *env, opts *options, m clientconfig.Machine, c clientconfig.Client, o installOptions, flags *pflag.FlagSet) error {
	f, err := clientsFileWith(opts.clients, opts.client)
	if err != nil {
		return err
	}
	if ignored := bridgeArgs(flags, m.Home); len(ignored) > 0 {
		fmt.Fprintf(e.stdout, "Not written (they are the HTTP bridge's flags, set where it runs): %s\n", strings.Join(ignored, " "))
	}
	if o.DryRun {
		fmt.Fprintf(e.stdout, "Would replace the token of client %s in %s, and write the new one into the entry.\n", opts.client, opts.clients)
		return clientconfig.Install(e.stdout, m, c, clientconfig.NewURLEntry(o.url, "tsk_…"), o.Options)
	}
	if !o.yes {
		if !isTerminal(e.stdin) {
			return fmt.Errorf("install --client %s replaces %s's token, and the one it has now stops working: pass --yes to do so from a script", opts.client, opts.client)
		}
		fmt.Fprintf(e.stderr, "Replace the token of client %s, and write the new one into %s's config? Whatever holds the one it has now is refused from then on. [y/N] ", safetext.Line(opts.client), c.Title)
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return errors.New("nothing changed")
		}
	}
	token, err := f.Rotate(opts.client, time.Now())
	if err != nil {
		return err
	}
	if err := clientconfig.Install(e.stdout, m, c, clientconfig.NewURLEntry(o.url, token), o.Options); err != nil {
		return err
	}
	if err := f.Save(opts.clients); err != nil {
		return fmt.Errorf("%s's config holds a new token for %s, but %s could not be written (%w): run install again", c.Title, opts.client, opts.clients, err)
	}
	fmt.Fprintf(e.stdout, "Replaced the token of client %s in %s.\n", opts.client, opts.clients)
	return nil
}

// clientsFileWith reads the clients file at path, which must name the
// client name.
func clientsFileWith(path, name string) (*clients.File, error) {
	f, err := clients.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--client %s: there is no clients file at %s; add the client first: tairseach-mcp clients add %s", name, path, name)
	}
	if err != nil {
		return nil, err
	}
	if _, ok := f.Clients[name]; !ok {
		return nil, fmt.Errorf("--client %s: %s has no such client (see tairseach-mcp clients list)", name, path)
	}
	return f, nil
}

// checkURL checks install's --url: the http or https URL of a bridge's
// MCP endpoint.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("--url %q: want the http:// or https:// URL the HTTP bridge serves, such as http://127.0.0.1:8411/mcp", raw)
	case u.User != nil:
		return fmt.Errorf("--url %q: no credentials in the URL: set TAIRSEACH_AUTH_TOKEN or --auth-token-file, and the entry carries the token as a header", raw)
	}
	return nil
}
