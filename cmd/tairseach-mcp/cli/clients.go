package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// newClientsCmd is the clients command: the named clients of the clients
// file, which only the command line writes.
func newClientsCmd(e *env, opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clients",
		Short: "Name the clients of the bridge: each its token, tools and limits",
		Long: `clients manages the clients file (--clients, default ~/.tairseach/clients.json): the
named clients of the bridge, each with its own bearer token (stored as a hash) and a
policy that narrows what the bridge's flags allow: the tools it sees, read-only, what
asks the user first, the calls it runs at once and makes a minute.

Over HTTP, with a clients file, every request needs a client's token (or the owner's,
--auth-token-file), loopback included, and the token selects the client. Over stdio,
--client NAME applies a client's policy to a bridge a desktop client starts. The bridge
reads the file, and follows its changes within a second; only these commands write it.
See docs/clients.md.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		// Only the settings these commands take are read: not the
		// bridge's, whose variables would set the flags of the same
		// names that clients add has.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := bindEnv(cmd.Flags(), e.getenv); err != nil {
				return err
			}
			home, _ := os.UserHomeDir()
			if err := opts.audit.resolve(home); err != nil {
				return err
			}
			return opts.resolveClients(home)
		},
	}
	cmd.AddCommand(newClientsAddCmd(e, opts), newClientsListCmd(e, opts), newClientsRemoveCmd(e, opts), newClientsRotateCmd(e, opts))
	return cmd
}

// clientPolicyFlags are the flags of clients add: a policy, named like the
// bridge's own flags.
type clientPolicyFlags struct {
	p           clients.Policy
	sampling    bool
	elicitation bool
}

func (pf *clientPolicyFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&pf.p.Include, "include", nil, "the client sees only the tools (prompts, resources) whose client or manifest name matches this glob, of those the bridge serves; repeatable, or comma-separated")
	fs.StringArrayVar(&pf.p.Exclude, "exclude", nil, "the client does not see those that match this glob; repeatable, or comma-separated")
	fs.BoolVar(&pf.p.ReadOnly, "read-only", false, "the client sees only tools annotated readOnlyHint: true")
	fs.StringArrayVar(&pf.p.Confirm, "confirm", nil, "these tools ask the user before they run, besides those the bridge's --confirm names (* for every tool); repeatable, or comma-separated")
	fs.StringVar(&pf.p.ConfirmUnsupported, "confirm-unsupported", "allow", "when the client cannot ask the user, for a tool that asks first: deny refuses it, whatever the bridge says; page asks the owner on the console instead (unless the bridge denies); allow: as the bridge says")
	fs.IntVar(&pf.p.MaxInFlight, "max-in-flight", 0, "most calls the client runs at once, over all its sessions (0: the bridge's limits only)")
	fs.IntVar(&pf.p.CallsPerMinute, "calls-per-minute", 0, "most calls the client makes a minute; past it, HTTP 429 (0: no limit)")
	fs.BoolVar(&pf.sampling, "sampling", true, "the backend may ask the client's model for completions during a call; false forbids it")
	fs.BoolVar(&pf.elicitation, "elicitation", true, "the backend may ask the client's user questions during a call; false forbids it")
	for _, name := range []string{"include", "exclude", "read-only", "confirm", "confirm-unsupported", "max-in-flight"} {
		own(fs, name)
	}
}

// policy returns the policy the flags give.
func (pf *clientPolicyFlags) policy(fs *pflag.FlagSet) (clients.Policy, error) {
	p := pf.p
	p.Include, p.Exclude, p.Confirm = splitPatterns(p.Include), splitPatterns(p.Exclude), splitPatterns(p.Confirm)
	if p.ConfirmUnsupported == "allow" {
		p.ConfirmUnsupported = "" // the bridge's say: the default
	}
	if p.MaxInFlight < 0 || p.CallsPerMinute < 0 {
		return p, errors.New("--max-in-flight and --calls-per-minute are counts: 0 for none")
	}
	if fs.Changed("sampling") && !pf.sampling {
		p.Sampling = &pf.sampling
	}
	if fs.Changed("elicitation") && !pf.elicitation {
		p.Elicitation = &pf.elicitation
	}
	return p, p.Check()
}

func newClientsAddCmd(e *env, opts *options) *cobra.Command {
	var pf clientPolicyFlags
	cmd := &cobra.Command{
		Use:   "add NAME [policy flags]",
		Short: "Add a named client and print its token, once",
		Long: `add adds a client called NAME to the clients file with the policy its flags give,
and prints its token on stdout, once: the file keeps only its hash. Give the token to
the client (the Authorization: Bearer header of its entry), or let install write it:
tairseach-mcp install CLIENT --url URL --client NAME.`,
		Example: `  tairseach-mcp clients add cursor --read-only
  tairseach-mcp clients add claude-desktop --confirm 'mail.*' --max-in-flight 4
  tairseach-mcp clients add nightly --include tairseach_notes_list --calls-per-minute 10`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := pf.policy(cmd.Flags())
			if err != nil {
				return usageError{err}
			}
			return editClients(e, opts.clients, func(f *clients.File) (string, error) {
				existed := len(f.Clients) > 0
				token, err := f.Add(args[0], p, time.Now())
				if err != nil {
					return "", err
				}
				fmt.Fprintf(e.stderr, "Added client %s (%s) to %s.\n", args[0], p.Summary(), opts.clients)
				if !existed {
					fmt.Fprintln(e.stderr, "With this file a bridge serving HTTP asks every request for a client's token (or the owner's), loopback included.")
				}
				return token, nil
			})
		},
	}
	opts.register(cmd.Flags(), 0, "clients")
	pf.register(cmd.Flags())
	return cmd
}

func newClientsRotateCmd(e *env, opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rotate NAME",
		Short: "Give a named client a new token and print it, once",
		Long: `rotate replaces the token of the client NAME and prints the new one on stdout, once.
The old token stops working within a second of a bridge's reading the file, and the
sessions made with it end.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editClients(e, opts.clients, func(f *clients.File) (string, error) {
				token, err := f.Rotate(args[0], time.Now())
				if err == nil {
					fmt.Fprintf(e.stderr, "New token for %s; the old one stops working now.\n", args[0])
				}
				return token, err
			})
		},
	}
	opts.register(cmd.Flags(), 0, "clients")
	return cmd
}

func newClientsRemoveCmd(e *env, opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a named client",
		Long: `remove removes the client NAME from the clients file: its token stops working and
its sessions end within a second of a bridge's reading the file.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editClients(e, opts.clients, func(f *clients.File) (string, error) {
				if err := f.Remove(args[0]); err != nil {
					return "", err
				}
				fmt.Fprintf(e.stdout, "Removed client %s from %s.\n", args[0], opts.clients)
				return "", nil
			})
		},
	}
	opts.register(cmd.Flags(), 0, "clients")
	return cmd
}

// editClients changes the clients file at path with edit and writes it
// back (0600, atomically). A token edit returns is printed on stdout,
// alone on its line, for a script to take.
func editClients(e *env, path string, edit func(*clients.File) (token string, err error)) error {
	f, err := clients.Load(path)
	if err != nil {
		return fmt.Errorf("%w: fix it (tairseach-mcp validate --clients %s) before changing it", err, path)
	}
	token, err := edit(f)
	if err != nil {
		return err
	}
	if err := f.Save(path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if token != "" {
		fmt.Fprintln(e.stdout, token)
	}
	return nil
}

func newClientsListCmd(e *env, opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show the named clients, their policies and last use (never their tokens)",
		Long: `list shows each client of the clients file: its name, its policy, when it was added,
and when it last made a call, as the audit log (--audit-log, default
~/.tairseach/audit.log) records it. Tokens are never shown: the file has only their
hashes.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			logPath := opts.audit.path
			if logPath == "" {
				home, _ := os.UserHomeDir()
				logPath = defaultAuditLog(home)
			}
			return runClientsList(cmd.Context(), e, opts.clients, logPath, asJSON)
		},
	}
	opts.register(cmd.Flags(), 0, "clients", "audit-log")
	cmd.Flags().Lookup("audit-log").Usage = "the audit log to read the clients' last use from (default ~/.tairseach/audit.log) (env TAIRSEACH_AUDIT_LOG)"
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the clients as JSON")
	return cmd
}

// listedClient is one client as clients list shows it.
type listedClient struct {
	Name    string         `json:"name"`
	Policy  clients.Policy `json:"policy"`
	Created string         `json:"created,omitzero"`
	Rotated string         `json:"rotated,omitzero"`
	LastUse string         `json:"lastUse,omitzero"`
	Calls   int            `json:"calls"`
}

func runClientsList(ctx context.Context, e *env, path, logPath string, asJSON bool) error {
	f, err := clients.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no clients file at %s: add a client with 'tairseach-mcp clients add NAME'", path)
	}
	if err != nil {
		return err
	}
	used := map[string]audit.Row{}
	s, logErr := audit.Summarize(ctx, logPath, audit.Filter{})
	if logErr == nil {
		for _, r := range s.Principals {
			if name, ok := strings.CutPrefix(r.Name, "client:"); ok {
				used[name] = r
			}
		}
	}
	var out []listedClient
	for _, name := range f.Names() {
		c := f.Clients[name]
		out = append(out, listedClient{Name: name, Policy: c.Policy, Created: c.Created, Rotated: c.Rotated,
			LastUse: used[name].LastUse, Calls: used[name].Calls})
	}
	if asJSON {
		if out == nil {
			out = []listedClient{}
		}
		return writeJSON(e.stdout, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(e.stdout, "No clients in %s.\n", path)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tPOLICY\tADDED\tLAST USE\tCALLS")
	loc := time.Now().Location()
	for _, c := range out {
		last := "-"
		if c.LastUse != "" {
			last = localTime(c.LastUse, loc)
		}
		added := "-"
		if c.Created != "" {
			added = localTime(c.Created, loc)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", safetext.Line(c.Name), safetext.Line(c.Policy.Summary()), added, last, c.Calls)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case errors.Is(logErr, fs.ErrNotExist):
		fmt.Fprintf(e.stdout, "Last use unknown: no audit log at %s (calls are recorded with --audit-log).\n", logPath)
	case logErr != nil:
		fmt.Fprintf(e.stdout, "Last use unknown: %v.\n", logErr)
	}
	return nil
}
