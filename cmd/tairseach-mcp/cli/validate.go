package cli

import (
	"encoding/json"
	"fmt"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/manifest"
)

func newValidateCmd(e *env, opts *options) *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "validate [DIR|FILE]...",
		Short: "Check manifests and report every problem with file and JSON path",
		Long: `validate loads manifests as the server does (default: the configured manifest folders)
and reports every problem as file:path: severity: message.

Errors keep a tool (or a whole file) from being served: invalid JSON, wrong field types,
missing fields, a schema that does not compile, an inputSchema or outputSchema without
"type": "object" at its root, two tools with the same client name.
Warnings are served but worth fixing: a tool without a method mapping (not served), a
mapping without a tool, an empty description, a top-level oneOf/anyOf/allOf in an
inputSchema, a name the client-safe mapping changed, a description or schema so large it
dominates the tool list.

The exit status is 1 when any error is found (with --strict, any warning too).
The manifest format is published as a JSON Schema for editors: manifest/manifest.schema.json.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(e, opts, args, asJSON, strict)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for tools")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 on warnings as well as errors")
	return cmd
}

// validateReport is the output of `validate --json`.
type validateReport struct {
	Dirs     []string           `json:"dirs"`
	Tools    int                `json:"tools"`
	Errors   int                `json:"errors"`
	Warnings int                `json:"warnings"`
	Problems []manifest.Problem `json:"problems"`
}

func runValidate(e *env, opts *options, dirs []string, asJSON, strict bool) error {
	if len(dirs) > 0 {
		o := *opts
		o.manifests = dirs
		opts = &o
	}
	if err := requireManifests(opts.manifests); err != nil {
		return err
	}
	log := zerolog.Nop()
	snap := newRegistry(opts, nil, &log, nil).Snapshot()
	rep := validateReport{Dirs: opts.manifests, Tools: len(snap.Entries), Problems: snap.Problems}
	if rep.Problems == nil {
		rep.Problems = []manifest.Problem{}
	}
	for _, p := range snap.Problems {
		if p.Severity == manifest.Error {
			rep.Errors++
		} else {
			rep.Warnings++
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		for _, p := range snap.Problems {
			fmt.Fprintln(e.stdout, printable(p.String()))
		}
		fmt.Fprintf(e.stdout, "%s served; %s, %s\n", plural(rep.Tools, "tool"), plural(rep.Errors, "error"), plural(rep.Warnings, "warning"))
	}
	if rep.Errors > 0 || strict && rep.Warnings > 0 {
		return exitStatus(exitError)
	}
	return nil
}
