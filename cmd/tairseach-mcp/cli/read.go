package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry"
)

func newReadCmd(e *env, opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "read URI",
		Short: "Read a resource the way an MCP client would and print its contents",
		Long: `read reads one resource through exactly the path a resources/read request takes: the
URI of a resource, or one that matches a resource template (its variables checked, then
passed to the backend), within --call-timeout. Text is printed; binary contents are
written as they are when stdout is not a terminal (read URI > file). The exit status is
1 when the read fails, with the error a client would get.`,
		Example: `  tairseach-mcp read tairseach://system/status
  tairseach-mcp read tairseach://notes/3f9a1c2b7d4e
  tairseach-mcp read --json tairseach://examples/readme`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRead(cmd.Context(), e, opts, args[0], asJSON)
		},
	}
	opts.register(cmd.Flags(), catalogFlags|filterFlags|backendFlags|logFlags|auditFlags)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole MCP result (contents, with blobs in base64) as JSON")
	return cmd
}

func runRead(ctx context.Context, e *env, opts *options, uri string, asJSON bool) error {
	reg, done, err := contentRegistry(e, opts)
	if err != nil {
		return err
	}
	defer done()
	call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: "tairseach-mcp read", Version: version()}, Transport: "cli"})
	res, err := reg.ReadResource(ctx, call, &protocol.ReadResourceRequest{URI: uri})
	if err != nil {
		msg := protocol.WireError(err).Message
		if errors.Is(err, protocol.ErrResourceNotFound) {
			msg = err.Error() + didYouMean(suggest(uri, knownURIs(reg.Snapshot()))) + "; run 'tairseach-mcp resources' to list them"
		}
		return failed(e, msg)
	}
	if asJSON {
		return writeJSON(e.stdout, res)
	}
	for _, c := range res.Contents {
		if c.Blob != nil {
			if isTerminal(e.stdout) {
				fmt.Fprintf(e.stderr, "%s: %s of %s; redirect stdout to write them to a file, or use --json\n", safetext.Line(c.URI), plural(len(c.Blob), "byte"), safetext.Line(c.MIMEType))
				continue
			}
			if _, err := e.stdout.Write(c.Blob); err != nil {
				return err
			}
			continue
		}
		text := c.Text
		if c.TextBytes != nil {
			text = string(c.TextBytes)
		}
		if c.MIMEType == "application/json" {
			text = prettyJSON(text)
		}
		fmt.Fprintln(e.stdout, safetext.Text(text))
	}
	return nil
}

// failed reports, on stderr, the error a client would have been sent,
// which may span lines, and ends the command with status 1.
func failed(e *env, msg string) error {
	fmt.Fprintln(e.stderr, safetext.Text(msg))
	return exitStatus(exitError)
}

// knownURIs lists what a person may have meant to read.
func knownURIs(snap *registry.Snapshot) []string {
	var uris []string
	for _, en := range snap.Resources {
		uris = append(uris, en.Resource.URI)
	}
	for _, en := range snap.Templates {
		uris = append(uris, en.Template.URITemplate)
	}
	return uris
}

func newPromptCmd(e *env, opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompt NAME [ARGUMENTS]",
		Short: "Fill in a prompt the way an MCP client would and print its messages",
		Long: `prompt fills in one prompt through exactly the path a prompts/get request takes: its
arguments checked, each {argument} replaced, each embedded resource read. NAME is the
client-visible name (see 'tairseach-mcp prompts'), the manifest's name, or the name
without the prefix. ARGUMENTS are name=value pairs, or one JSON object of strings, or -
to read that object from stdin. The exit status is 1 when it fails.`,
		Example: `  tairseach-mcp prompt tairseach_notes_review id=3f9a1c2b7d4e
  tairseach-mcp prompt notes.summarize topic=groceries
  tairseach-mcp prompt tairseach_notes_summarize '{"topic":"groceries"}'`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrompt(cmd.Context(), e, opts, args[0], args[1:], asJSON)
		},
	}
	opts.register(cmd.Flags(), catalogFlags|filterFlags|backendFlags|logFlags|auditFlags)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole MCP result (description, messages) as JSON")
	return cmd
}

func runPrompt(ctx context.Context, e *env, opts *options, name string, args []string, asJSON bool) error {
	arguments, err := promptArguments(e.stdin, args)
	if err != nil {
		return usageError{err}
	}
	reg, done, err := contentRegistry(e, opts)
	if err != nil {
		return err
	}
	defer done()
	if name, err = resolvePrompt(reg.Snapshot(), opts.prefix, name); err != nil {
		return err
	}
	call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: "tairseach-mcp prompt", Version: version()}, Transport: "cli"})
	res, err := reg.GetPrompt(ctx, call, &protocol.GetPromptRequest{Name: name, Arguments: arguments})
	if err != nil {
		return failed(e, protocol.WireError(err).Message)
	}
	if asJSON {
		return writeJSON(e.stdout, res)
	}
	for i, m := range res.Messages {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		if c := m.Resource; c != nil {
			fmt.Fprintf(e.stdout, "%s: [resource %s, %s]\n", m.Role, safetext.Line(c.URI), safetext.Line(c.MIMEType))
			switch {
			case c.Blob != nil:
				fmt.Fprintf(e.stdout, "(%s)\n", plural(len(c.Blob), "byte"))
			case c.TextBytes != nil:
				fmt.Fprintln(e.stdout, safetext.Text(string(c.TextBytes)))
			default:
				fmt.Fprintln(e.stdout, safetext.Text(c.Text))
			}
			continue
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", m.Role, safetext.Text(m.Text))
	}
	return nil
}

// promptArguments reads a prompt's arguments from the command line:
// name=value pairs, one JSON object of strings, or - for that object
// from stdin.
func promptArguments(stdin io.Reader, args []string) (map[string]string, error) {
	if len(args) == 1 && (args[0] == "-" || strings.HasPrefix(strings.TrimSpace(args[0]), "{")) {
		data := []byte(args[0])
		if args[0] == "-" {
			var err error
			if data, err = io.ReadAll(stdin); err != nil {
				return nil, fmt.Errorf("read arguments from stdin: %w", err)
			}
		}
		var out map[string]string
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, fmt.Errorf(`arguments must be a JSON object of strings, like '{"topic":"groceries"}'`)
		}
		return out, nil
	}
	out := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q is not name=value", a)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("argument %q is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// resolvePrompt finds the client name of the prompt a person means, as
// resolveTool does for a tool.
func resolvePrompt(snap *registry.Snapshot, prefix, typed string) (string, error) {
	var served []names
	for _, en := range snap.Prompts {
		served = append(served, names{en.Name, en.Prompt.Name})
	}
	return resolveName("prompt", prefix, typed, served, func() error {
		for _, u := range snap.UnservedContent {
			if u.Kind == "prompt" && (u.Name == typed || u.ManifestName == typed) {
				return fmt.Errorf("%s (%s in %s) is not served: %s", safetext.Line(typed), u.Path, safetext.Line(u.File), u.Reason)
			}
		}
		return nil
	})
}

// contentRegistry loads the manifests with a backend and the audit log,
// for read and prompt: quiet unless --log-level asks, as for call. done
// closes the audit log and the backend, and flushes the log.
func contentRegistry(e *env, opts *options) (reg *registry.Registry, done func(), err error) {
	if err := requireManifests(opts.manifests); err != nil {
		return nil, nil, err
	}
	level := opts.logLevel
	if !opts.logLevelSet {
		level = "error"
	}
	log, flushLog := newLogger(e.stderr, level, opts.logFormat)
	backend := newBackend(opts, &log)
	rec, closeAudit := openAudit(opts.audit, &log)
	return newRegistry(opts, backend, &log, nil, rec), func() { closeAudit(); backend.Close(); flushLog() }, nil
}
