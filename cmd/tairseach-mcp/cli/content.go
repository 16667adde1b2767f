package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry"
)

func newResourcesCmd(e *env, opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resources",
		Short: "List the resources and resource templates that would be served, and where each comes from",
		Long: `resources loads the manifests exactly as the server does and lists the resources and
resource templates a client would see, for the current --include, --exclude and
--read-only: each URI (or URI template), its name, where its contents come from (a
backend method, a file, inline text) and its manifest, then those it would not serve
and why. It does not contact the backend: 'tairseach-mcp read URI' reads one.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runResources(e, opts, asJSON)
		},
	}
	opts.register(cmd.Flags(), catalogFlags|filterFlags)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// resourceInfo is one line of `resources --json`: a resource (URI) or a
// template (URITemplate).
type resourceInfo struct {
	URI          string                       `json:"uri,omitempty"`
	URITemplate  string                       `json:"uriTemplate,omitempty"`
	Name         string                       `json:"name"`
	Title        string                       `json:"title,omitempty"`
	Description  string                       `json:"description,omitempty"`
	MIMEType     string                       `json:"mimeType,omitempty"`
	Method       string                       `json:"method,omitempty"`
	Params       jsontext.Value               `json:"params,omitzero"`
	File         string                       `json:"file,omitempty"` // as the manifest gives it
	MaxBytes     int64                        `json:"maxBytes,omitempty"`
	Text         *string                      `json:"text,omitempty"`
	Complete     map[string]string            `json:"complete,omitempty"`
	ManifestFile string                       `json:"manifestFile"`
	Annotations  *manifest.ContentAnnotations `json:"annotations,omitempty"`
}

func runResources(e *env, opts *options, asJSON bool) error {
	if err := requireManifests(opts.manifests); err != nil {
		return err
	}
	snap := newRegistry(opts, nil, nil, nil, nil).Snapshot()
	if asJSON {
		infos := []resourceInfo{}
		for _, en := range snap.Resources {
			r := en.Resource
			infos = append(infos, resourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType,
				Method: r.Method, Params: r.Params, File: r.File, MaxBytes: r.MaxBytes, Text: r.Text, ManifestFile: en.File, Annotations: r.Annotations})
		}
		for _, en := range snap.Templates {
			t := en.Template
			infos = append(infos, resourceInfo{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType,
				Method: t.Method, Params: t.Params, Complete: en.Complete, ManifestFile: en.File, Annotations: t.Annotations})
		}
		return writeJSON(e.stdout, infos)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "URI\tNAME\tFROM\tFILE")
	for _, en := range snap.Resources {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safetext.Line(en.Resource.URI), safetext.Line(en.Resource.Name), safetext.Line(source(en.Resource)), safetext.Line(en.File))
	}
	for _, en := range snap.Templates {
		from := "method " + en.Template.Method
		if len(en.Complete) > 0 {
			from += fmt.Sprintf(" (completes %s)", strings.Join(slices.Sorted(maps.Keys(en.Complete)), ", "))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safetext.Line(en.Template.URITemplate), safetext.Line(en.Template.Name), safetext.Line(from), safetext.Line(en.File))
	}
	if err := printUnserved(tw, snap, "resource", "resourceTemplate"); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s and %s from %s%s\n", plural(len(snap.Resources), "resource"), plural(len(snap.Templates), "template"),
		safetext.Line(joinPaths(opts.manifests)), errorsNote(snap))
	return nil
}

// source says where a resource's contents come from.
func source(r *manifest.Resource) string {
	switch {
	case r.Text != nil:
		return "text"
	case r.File != "":
		limit := r.MaxBytes
		if limit <= 0 {
			limit = manifest.DefaultMaxBytes
		}
		return fmt.Sprintf("file %s (its last %s)", r.File, sizeText(limit))
	}
	return "method " + r.Method
}

// sizeText writes a byte count in the largest unit that divides it.
func sizeText(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return plural(int(n), "byte")
}

func newPromptsCmd(e *env, opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "List the prompts that would be served, with their arguments",
		Long: `prompts loads the manifests exactly as the server does and lists the prompts a client
would see, for the current --include and --exclude: each client name, its arguments (a
* marks a required one), and its manifest, then the prompts it would not serve and why.
'tairseach-mcp prompt NAME' fills one in.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPrompts(e, opts, asJSON)
		},
	}
	opts.register(cmd.Flags(), catalogFlags|filterFlags)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// promptInfo is one line of `prompts --json`.
type promptInfo struct {
	Name         string                    `json:"name"`
	ManifestName string                    `json:"manifestName"`
	Title        string                    `json:"title,omitempty"`
	Description  string                    `json:"description,omitempty"`
	Arguments    []manifest.PromptArgument `json:"arguments"`
	Messages     []manifest.PromptMessage  `json:"messages"`
	Complete     map[string]string         `json:"complete,omitempty"`
	ManifestFile string                    `json:"manifestFile"`
}

func runPrompts(e *env, opts *options, asJSON bool) error {
	if err := requireManifests(opts.manifests); err != nil {
		return err
	}
	snap := newRegistry(opts, nil, nil, nil, nil).Snapshot()
	if asJSON {
		infos := []promptInfo{}
		for _, en := range snap.Prompts {
			p := en.Prompt
			args := p.Arguments
			if args == nil {
				args = []manifest.PromptArgument{}
			}
			infos = append(infos, promptInfo{Name: en.Name, ManifestName: p.Name, Title: p.Title, Description: p.Description,
				Arguments: args, Messages: p.Messages, Complete: en.Complete, ManifestFile: en.File})
		}
		return writeJSON(e.stdout, infos)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARGUMENTS\tFILE")
	for _, en := range snap.Prompts {
		var args []string
		for _, a := range en.Prompt.Arguments {
			if a.Required {
				a.Name += "*"
			}
			args = append(args, a.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", en.Name, safetext.Line(strings.Join(args, " ")), safetext.Line(en.File))
	}
	if err := printUnserved(tw, snap, "prompt"); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s from %s%s\n", plural(len(snap.Prompts), "prompt"), safetext.Line(joinPaths(opts.manifests)), errorsNote(snap))
	return nil
}

// printUnserved lists the content of the kinds given that snap does not
// serve, and why, and flushes tw.
func printUnserved(tw *tabwriter.Writer, snap *registry.Snapshot, kinds ...string) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	header := false
	for _, u := range snap.UnservedContent {
		if !slices.Contains(kinds, u.Kind) {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "\nNOT SERVED\tWHY\tFILE")
			header = true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", safetext.Line(u.ManifestName), safetext.Line(u.Reason), safetext.Line(u.File))
	}
	return tw.Flush()
}

// errorsNote points at validate when the manifests have errors.
func errorsNote(snap *registry.Snapshot) string {
	if errs, _ := countProblems(snap.Problems); errs > 0 {
		return fmt.Sprintf("; %s in the manifests, see 'tairseach-mcp validate'", plural(errs, "error"))
	}
	return ""
}
