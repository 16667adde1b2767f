// Package cli is the tairseach-mcp command line: flags, environment,
// defaults, the root logger and the wiring of protocol, registry and
// socketclient. It is the one place that maps errors to exit statuses.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// Exit statuses.
const (
	exitOK          = 0
	exitError       = 1 // the command ran and failed (a tool error, problems found)
	exitUsage       = 2 // the command was invoked wrongly
	exitUnknownTool = 3 // call: no tool answers to the name given
)

// env reads the process environment; tests substitute their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
	hurry          <-chan struct{} // closed when asked a second time to stop
}

// Main runs the command line with the process's arguments and streams and
// returns the exit status.
func Main() int {
	// A client ends the session with SIGTERM, a person with Ctrl-C or by
	// closing the terminal: each ends it gracefully (see Server.Serve),
	// and a second one ends the grace period at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hurry := make(chan struct{})
	go func() { // ends at the second signal, or with the process
		<-sigs
		cancel()
		<-sigs
		close(hurry)
	}()
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.LookupEnv, hurry: hurry}
	return run(ctx, e, os.Args[1:])
}

func run(ctx context.Context, e *env, args []string) int {
	root := newRootCmd(e)
	if args == nil {
		args = []string{} // not os.Args, which cobra reads for nil
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var status exitStatus
	if errors.As(err, &status) {
		return int(status)
	}
	fmt.Fprintf(e.stderr, "tairseach-mcp: %s\n", safetext.Line(err.Error()))
	var ue usageError
	var ut unknownToolError
	switch {
	case errors.As(err, &ue) || isCobraUsageError(err):
		fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	case errors.As(err, &ut):
		return exitUnknownTool
	}
	return exitError
}

// exitStatus ends a command with a status after it already said why.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// isCobraUsageError recognises cobra's unknown-command error, which is
// not typed; flag and argument errors are wrapped as usageError.
func isCobraUsageError(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command")
}

// unknownToolError marks the failure to find the tool a command names
// (exit status 3), so that a script can tell it from a tool's error.
type unknownToolError struct{ err error }

func (e unknownToolError) Error() string { return e.err.Error() }
func (e unknownToolError) Unwrap() error { return e.err }

// usageArgs marks an argument validator's errors as usage errors.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

func newRootCmd(e *env) *cobra.Command {
	opts := newOptions()
	root := &cobra.Command{
		Use:   "tairseach-mcp",
		Short: "Serve a Tairseach backend's tools to MCP clients over stdio",
		Long: `tairseach-mcp serves MCP on stdin/stdout. It reads tool manifests (JSON files,
watched for changes) and forwards each tools/call to the backend method the manifest
names, over the backend's Unix socket. The resources, resource templates and prompts the
manifests declare are served too, read from the backend, a file or the manifest.

With no flags it behaves like the Rust bridge: manifests from ~/.tairseach/manifests,
socket ~/.tairseach/tairseach.sock, tool names prefixed with "tairseach_".

Every flag can also be set by its environment variable; a flag wins over the
variable, which wins over the default. Each command takes the flags it uses:
see its --help.`,
		Args:          unknownCommand,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return opts.load(cmd.Flags(), e.getenv)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), e, opts)
		},
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(flagError)
	root.SetVersionTemplate("{{.Version}}\n")
	opts.register(root.Flags(), allFlags)
	root.AddCommand(
		newToolsCmd(e, opts),
		newCallCmd(e, opts),
		newResourcesCmd(e, opts), newReadCmd(e, opts),
		newPromptsCmd(e, opts), newPromptCmd(e, opts),
		newValidateCmd(e, opts),
		newVersionCmd(e),
		newInstallCmd(e, opts), newUninstallCmd(e),
		newDoctorCmd(e, opts),
		newStatsCmd(e, opts),
		newClientsCmd(e, opts),
	)
	return root
}

// load sets the settings whose flags fs has and the command line left
// alone from the environment, and resolves them all.
func (o *options) load(fs *pflag.FlagSet, getenv func(string) (string, bool)) error {
	var err error
	if o.fromEnv, err = bindEnv(fs, getenv); err != nil {
		return err
	}
	if token, ok := getenv("TAIRSEACH_AUTH_TOKEN"); ok {
		o.http.token = token // from the environment only: a flag would show in ps
	}
	o.logLevelSet = fs.Changed("log-level") || slices.Contains(o.fromEnv, "log-level")
	return o.resolve()
}

// unknownCommand refuses arguments to the root command, naming the
// subcommands they are close to.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return usageError{fmt.Errorf("unknown command %q%s", args[0], didYouMean(suggest(args[0], names)))}
}

// flagError marks a flag error as a usage error and, for an unknown
// flag, names the flags it is close to.
func flagError(cmd *cobra.Command, err error) error {
	var unknown *pflag.NotExistError
	if errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() == "" {
		name := unknown.GetSpecifiedName()
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		near := suggest(name, names)
		for i := range near {
			near[i] = "--" + near[i]
		}
		err = fmt.Errorf("%w%s", err, didYouMean(near))
	}
	return usageError{err}
}
