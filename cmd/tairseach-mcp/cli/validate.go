package cli

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/registry/clients"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry"
)

func newValidateCmd(e *env, opts *options) *cobra.Command {
	var asJSON, strict, verbose bool
	cmd := &cobra.Command{
		Use:   "validate [DIR|FILE]...",
		Short: "Check manifests and report every problem with file and JSON path",
		Long: `validate loads manifests as the server does (default: the configured manifest folders)
and reports every problem as file:path: severity: message.

Errors keep a tool, resource, resource template or prompt (or a whole file) from being
served: invalid JSON, wrong field types, missing fields, a schema that does not compile,
an inputSchema or outputSchema without "type": "object" at its root, two tools with the
same client name and different backend methods, two resources with the same URI (or
templates with the same URI template, or prompts with the same client name), a resource
without exactly one of method, file and text, a URI template beyond RFC 6570 level 1, a
method that implementation.methods does not list or that a destructive tool calls, a
prompt that embeds a resource nothing serves, an x-mcp-header that breaks MCP's rules
(a name that is not a unique HTTP token, on a property that is not a string, an integer or a
boolean, or not reached from the root through "properties" alone).
Warnings are served but worth fixing: a tool without a method mapping (not served), a
mapping that nothing calls, an empty description, a top-level oneOf/anyOf/allOf in an
inputSchema, a description or schema so large it dominates the tool list, a {placeholder}
in a prompt's text that names no argument.
Info lines are neither: two tools with the same client name and the same backend method
are one tool, served once. Names renamed for clients (notes.create becomes
tairseach_notes_create) and tools kept back by --include, --exclude or --read-only are
counted in one line each; --verbose lists them, with every tool, resource, template
and prompt not served and why.

With --clients FILE it checks the clients file instead, as a bridge reads it: its
mode (0600: a file others can read is refused), its format, one token id per client,
well-formed globs; and the manifests too when they are named (DIR|FILE, --manifests).

The exit status is 1 when any error is found (with --strict, any warning too).
The manifest format is published as a JSON Schema for editors: manifest/manifest.schema.json;
the clients file's beside it: manifest/clients.schema.json.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Only on the command line: a TAIRSEACH_CLIENTS set for the
			// bridge must not turn validate away from the manifests.
			if !cmd.Flags().Changed("clients") {
				return runValidate(e, opts, args, asJSON, strict, verbose)
			}
			err := runValidateClients(e, opts.clients, asJSON)
			if len(args) > 0 || cmd.Flags().Changed("manifests") || slices.Contains(opts.fromEnv, "manifests") {
				err = cmp.Or(runValidate(e, opts, args, asJSON, strict, verbose), err)
			}
			return err
		},
	}
	opts.register(cmd.Flags(), catalogFlags|filterFlags, "clients")
	cmd.Flags().Lookup("clients").Usage = "check this clients file (see 'tairseach-mcp clients'), and the manifests only when they are named"
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for tools")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 on warnings as well as errors")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list renamed tools and every tool not served, with the reason")
	return cmd
}

// validateReport is the output of `validate --json`.
type validateReport struct {
	Dirs              []string                   `json:"dirs"`
	Tools             int                        `json:"tools"`
	Resources         int                        `json:"resources"`
	ResourceTemplates int                        `json:"resourceTemplates"`
	Prompts           int                        `json:"prompts"`
	Errors            int                        `json:"errors"`
	Warnings          int                        `json:"warnings"`
	Problems          []manifest.Problem         `json:"problems"`
	Renamed           []renamed                  `json:"renamed"`
	Unserved          []registry.Unserved        `json:"unserved"`
	UnservedContent   []registry.UnservedContent `json:"unservedContent"`
}

// renamed is a tool or prompt whose client name is not <prefix>_<manifest name>.
type renamed struct {
	File   string `json:"file"`
	Path   string `json:"path"`
	Tool   string `json:"tool,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	Name   string `json:"name"`
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
	rep := validateReport{Dirs: opts.manifests, Tools: len(snap.Entries), Resources: len(snap.Resources),
		ResourceTemplates: len(snap.Templates), Prompts: len(snap.Prompts), Problems: snap.Problems,
		Renamed: []renamed{}, Unserved: snap.Unserved, UnservedContent: snap.UnservedContent}
	if rep.Problems == nil {
		rep.Problems = []manifest.Problem{}
	}
	if rep.Unserved == nil {
		rep.Unserved = []registry.Unserved{}
	}
	if rep.UnservedContent == nil {
		rep.UnservedContent = []registry.UnservedContent{}
	}
	rep.Errors, rep.Warnings = countProblems(snap.Problems)
	for _, en := range snap.Entries {
		if _, changed := registry.ClientName(opts.prefix, en.Tool.Name); changed {
			rep.Renamed = append(rep.Renamed, renamed{File: en.File, Path: en.Tool.Path() + ".name", Tool: en.Tool.Name, Name: en.Name})
		}
	}
	for _, en := range snap.Prompts {
		if _, changed := registry.ClientName(opts.prefix, en.Prompt.Name); changed {
			rep.Renamed = append(rep.Renamed, renamed{File: en.File, Path: en.Prompt.Path() + ".name", Prompt: en.Prompt.Name, Name: en.Name})
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
		fmt.Fprintln(e.stdout, safetext.Line(file+":"+path+": info: "+msg))
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(e.stdout, safetext.Line(p.String()))
	}
	filtered, filteredContent := 0, 0
	for _, u := range rep.Unserved {
		if u.Filtered {
			filtered++
		}
		if u.Folded || verbose {
			info(u.File, u.Path, fmt.Sprintf("tool %q not served: %s", u.Tool, u.Reason))
		}
	}
	for _, u := range rep.UnservedContent {
		if u.Filtered {
			filteredContent++
		}
		if verbose {
			info(u.File, u.Path, fmt.Sprintf("%s %q not served: %s", kindWords[u.Kind], u.ManifestName, u.Reason))
		}
	}
	renamedPrompts := 0
	for _, r := range rep.Renamed {
		what := "tool"
		if r.Prompt != "" {
			what = "prompt"
			renamedPrompts++
		}
		if verbose {
			info(r.File, r.Path, fmt.Sprintf("clients see this %s as %q", what, r.Name))
		}
	}
	more := "; --verbose lists them"
	if verbose {
		more = ""
	}
	if n := len(rep.Renamed) - renamedPrompts; n > 0 {
		fmt.Fprintf(e.stdout, "%s renamed for clients (names must match ^[a-zA-Z0-9_-]{1,64}$)%s\n", plural(n, "tool"), more)
	}
	if renamedPrompts > 0 {
		fmt.Fprintf(e.stdout, "%s renamed for clients, as tools are%s\n", plural(renamedPrompts, "prompt"), more)
	}
	if filtered > 0 {
		fmt.Fprintf(e.stdout, "%s filtered out by --include, --exclude or --read-only%s\n", plural(filtered, "tool"), more)
	}
	if filteredContent > 0 {
		what := "resources, templates or prompts"
		if filteredContent == 1 {
			what = "resource, template or prompt"
		}
		fmt.Fprintf(e.stdout, "%d %s filtered out by --include, --exclude or --read-only%s\n", filteredContent, what, more)
	}
	served := plural(rep.Tools, "tool")
	if rep.Resources+rep.ResourceTemplates+rep.Prompts+len(rep.UnservedContent) > 0 {
		served = fmt.Sprintf("%s, %s, %s and %s", served, plural(rep.Resources, "resource"),
			plural(rep.ResourceTemplates, "resource template"), plural(rep.Prompts, "prompt"))
	}
	fmt.Fprintf(e.stdout, "%s served; %s, %s\n", served, plural(rep.Errors, "error"), plural(rep.Warnings, "warning"))
}

// kindWords name the kinds of UnservedContent in sentences.
var kindWords = map[string]string{"resource": "resource", "resourceTemplate": "resource template", "prompt": "prompt"}

// clientsReport is the output of validate --clients --json.
type clientsReport struct {
	File     string            `json:"file"`
	Clients  int               `json:"clients"`
	Errors   int               `json:"errors"`
	Problems []clients.Problem `json:"problems"`
}

// runValidateClients checks the clients file at path as a bridge reads it.
func runValidateClients(e *env, path string, asJSON bool) error {
	rep := clientsReport{File: path, Problems: []clients.Problem{}}
	f, err := clients.Read(path)
	var fe *clients.FileError
	switch {
	case errors.As(err, &fe):
		rep.Problems = fe.Problems
	case err != nil:
		rep.Problems = []clients.Problem{{Message: err.Error()}}
	default:
		rep.Clients = len(f.Clients)
	}
	rep.Errors = len(rep.Problems)
	if asJSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			where := path
			if p.Path != "" {
				where += ":" + p.Path
			}
			fmt.Fprintln(e.stdout, safetext.Line(where+": error: "+p.Message))
		}
		fmt.Fprintf(e.stdout, "%s: %s; %s\n", safetext.Line(path), plural(rep.Clients, "client"), plural(rep.Errors, "error"))
	}
	if rep.Errors > 0 {
		return exitStatus(exitError)
	}
	return nil
}
