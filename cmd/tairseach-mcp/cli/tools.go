package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry"
)

func newToolsCmd(e *env, opts *options) *cobra.Command {
	var asJSON, tokens bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools that would be served: MCP name, backend method, source file",
		Long: `tools loads the manifests exactly as the server does and lists what a client would
see, for the current --include, --exclude, --read-only, then the tools it would not
serve and why. It does not contact the backend. Problems are listed by
'tairseach-mcp validate'.

With --tokens it shows instead what the tool list costs a client, for the current filters
and --tool-mode: the bytes of each tool's JSON and of the whole tools/list response, as
the bridge sends them to a client of the newest MCP version, and their
` + tokenMethod + `.

The exit status is 1 when the manifests have errors, as for validate: the tools or files
with errors are not served.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireManifests(opts.manifests); err != nil {
				return err
			}
			reg := newRegistry(opts, nil, nil, nil, nil)
			var err error
			if tokens {
				err = runTokens(cmd.Context(), e, opts, reg, asJSON)
			} else {
				err = runTools(e, opts, reg.Snapshot(), asJSON)
			}
			if err != nil {
				return err
			}
			errs, _ := countProblems(reg.Snapshot().Problems)
			if errs == 0 {
				return nil
			}
			if asJSON || tokens { // the table's summary line says it
				fmt.Fprintf(e.stderr, "%s in the manifests, see 'tairseach-mcp validate'\n", plural(errs, "error"))
			}
			return exitStatus(exitError) // like validate
		},
	}
	opts.register(cmd.Flags(), catalogFlags|filterFlags|policyFlags)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().BoolVar(&tokens, "tokens", false, "show the bytes and estimated tokens of the tool list a client receives")
	return cmd
}

// toolInfo is one line of `tools --json`.
type toolInfo struct {
	Name         string         `json:"name"`
	Method       string         `json:"method"`
	File         string         `json:"file"`
	ManifestName string         `json:"manifestName"`
	Title        string         `json:"title,omitempty"`
	Description  string         `json:"description,omitempty"`
	InputSchema  jsontext.Value `json:"inputSchema"`
	OutputSchema jsontext.Value `json:"outputSchema,omitzero"`
	// Confirm says why the user is asked before each call, when they are.
	Confirm *registry.ConfirmReason `json:"confirm,omitzero"`
}

func runTools(e *env, opts *options, snap *registry.Snapshot, asJSON bool) error {
	if asJSON {
		infos := make([]toolInfo, 0, len(snap.Entries))
		for _, en := range snap.Entries {
			infos = append(infos, toolInfo{
				Name: en.Name, Method: en.Method, File: en.File, ManifestName: en.Tool.Name,
				Title: en.Tool.Title, Description: en.Tool.Description,
				InputSchema: en.Tool.InputSchema, OutputSchema: en.Tool.OutputSchema, Confirm: en.Confirm,
			})
		}
		return writeJSON(e.stdout, infos)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMETHOD\tASKS FIRST\tFILE")
	for _, en := range snap.Entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", en.Name, safetext.Line(en.Method), asksFirst(en.Confirm), safetext.Line(en.File))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(snap.Unserved) > 0 {
		fmt.Fprintln(tw, "\nNOT SERVED\tWHY\tFILE")
		for _, u := range snap.Unserved {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", safetext.Line(u.Tool), safetext.Line(u.Reason), safetext.Line(u.File))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	errs, _ := countProblems(snap.Problems)
	fmt.Fprintf(e.stderr, "%s from %s", plural(len(snap.Entries), "tool"), safetext.Line(joinPaths(opts.manifests)))
	if errs > 0 {
		fmt.Fprintf(e.stderr, "; %s in the manifests, see 'tairseach-mcp validate'", plural(errs, "error"))
	}
	fmt.Fprintln(e.stderr)
	return nil
}

// asksFirst says whether and why the user is asked before a tool runs,
// in the words of the flags and manifests that decide it.
func asksFirst(r *registry.ConfirmReason) string {
	if r == nil {
		return "-"
	}
	switch r.By {
	case "annotation":
		return "yes: destructiveHint"
	case "manifest":
		return "yes: manifest's confirm"
	case "pattern":
		return fmt.Sprintf("yes: --confirm %s", safetext.Line(r.Pattern))
	}
	return "yes: --confirm all"
}

func runTokens(ctx context.Context, e *env, opts *options, reg *registry.Registry, asJSON bool) error {
	c, err := measureList(ctx, toolProvider(opts, reg))
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, c)
	}
	return printCost(e, c)
}
