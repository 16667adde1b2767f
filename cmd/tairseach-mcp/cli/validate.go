package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/registry"
)

func newValidateCmd(e *env, opts *options) *cobra.Command {
	var asJSON, strict, verbose bool
	cmd := &cobra.Command{
		Use:   "validate [DIR|FILE]...",
		Short: "Check manifests and report every problem with file and JSON path",
		Long: `validate loads manifests as the server does (default: the configured manifest folders)
and reports every problem as file:path: severity: message.

Errors keep a tool (or a whole file) from being served: invalid JSON, wrong field types,
missing fields, a schema that does not compile, an inputSchema or outputSchema without
"type": "object" at its root, two tools with the same client name and different backend
methods.
Warnings are served but worth fixing: a tool without a method mapping (not served), a
mapping without a tool, an empty description, a top-level oneOf/anyOf/allOf in an
inputSchema, a description or schema so large it dominates the tool list.
Info lines are neither: two tools with the same client name and the same backend method
are one tool, served once. Names renamed for clients (notes.create becomes
tairseach_notes_create) and tools kept back by --include, --exclude or --read-only are
counted in one line each; --verbose lists them, with every tool not served and why.

The exit status is 1 when any error is found (with --strict, any warning too).
The manifest format is published as a JSON Schema for editors: manifest/manifest.schema.json.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(e, opts, args, asJSON, strict, verbose)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for tools")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 on warnings as well as errors")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list renamed tools and every tool not served, with the reason")
	return cmd
}

// validateReport is the output of `validate --json`.
type validateReport struct {
	Dirs     []string            `json:"dirs"`
	Tools    int                 `json:"tools"`
	Errors   int                 `json:"errors"`
	Warnings int                 `json:"warnings"`
	Problems []manifest.Problem  `json:"problems"`
	Renamed  []renamed           `json:"renamed"`
	Unserved []registry.Unserved `json:"unserved"`
}

// renamed is a tool whose client name is not <prefix>_<manifest name>.
type renamed struct {
	File string `json:"file"`
	Path string `json:"path"`
	Tool string `json:"tool"`
	Name string `json:"name"`
}

func runValidate(e *env, opts *options, dirs []string, asJSON, strict, verbose bool) error {
	if len(dirs) > 0 {
		o := *opts
		o.manifests = dirs
		opts = &o
	}
	if err := requireManifests(opts.manifests); err != nil {
		return err
	}
	snap := newRegistry(opts, nil, nil, nil, nil).Snapshot()
	rep := validateReport{Dirs: opts.manifests, Tools: len(snap.Entries), Problems: snap.Problems,
		Renamed: []renamed{}, Unserved: snap.Unserved}
	if rep.Problems == nil {
		rep.Problems = []manifest.Problem{}
	}
	if rep.Unserved == nil {
		rep.Unserved = []registry.Unserved{}
	}
	rep.Errors, rep.Warnings = countProblems(snap.Problems)
	for _, en := range snap.Entries {
		if _, changed := registry.ClientName(opts.prefix, en.Tool.Name); changed {
			rep.Renamed = append(rep.Renamed, renamed{en.File, en.Tool.Path() + ".name", en.Tool.Name, en.Name})
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		printValidate(e, &rep, verbose)
	}
	if rep.Errors > 0 || strict && rep.Warnings > 0 {
		return exitStatus(exitError)
	}
	return nil
}

func printValidate(e *env, rep *validateReport, verbose bool) {
	info := func(file, path, msg string) {
		fmt.Fprintln(e.stdout, printable(file+":"+path+": info: "+msg))
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(e.stdout, printable(p.String()))
	}
	filtered := 0
	for _, u := range rep.Unserved {
		if u.Filtered {
			filtered++
		}
		if u.Folded || verbose {
			info(u.File, u.Path, fmt.Sprintf("tool %q not served: %s", u.Tool, u.Reason))
		}
	}
	for _, r := range rep.Renamed {
		if verbose {
			info(r.File, r.Path, fmt.Sprintf("clients see this tool as %q", r.Name))
		}
	}
	more := "; --verbose lists them"
	if verbose {
		more = ""
	}
	if n := len(rep.Renamed); n > 0 {
		fmt.Fprintf(e.stdout, "%s renamed for clients (names must match ^[a-zA-Z0-9_-]{1,64}$)%s\n", plural(n, "tool"), more)
	}
	if filtered > 0 {
		fmt.Fprintf(e.stdout, "%s filtered out by --include, --exclude or --read-only%s\n", plural(filtered, "tool"), more)
	}
	fmt.Fprintf(e.stdout, "%s served; %s, %s\n", plural(rep.Tools, "tool"), plural(rep.Errors, "error"), plural(rep.Warnings, "warning"))
}
