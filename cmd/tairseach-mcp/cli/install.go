package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
)

// installOptions are the flags of install and uninstall.
type installOptions struct {
	clientconfig.Options
	list  bool
	audit bool   // add --audit-log with the default path
	url   string // reach a bridge serving HTTP there instead of starting one
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
var pathFlags = map[string]bool{"socket": true, "manifests": true, "audit-log": true}

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
	token, err := opts.http.bearerToken()
	if err != nil {
		return err
	}
	if ignored := serverArgs(flags, m.Home); len(ignored) > 0 {
		fmt.Fprintf(e.stdout, "Not written (they are the HTTP bridge's flags, set where it runs): %s\n", strings.Join(ignored, " "))
	}
	return clientconfig.Install(e.stdout, m, c, clientconfig.NewURLEntry(o.url, token), o.Options)
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
