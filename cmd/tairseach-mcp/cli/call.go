package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry"
)

func newCallCmd(e *env, opts *options) *cobra.Command {
	var asJSON, yes, asTask bool
	cmd := &cobra.Command{
		Use:   "call NAME [ARGUMENTS]",
		Short: "Call a tool the way an MCP client would and print its result",
		Long: `call runs one tool through exactly the path a tools/call request takes: name lookup,
argument validation against the inputSchema, the backend call, result checks. NAME is the
client-visible name (see 'tairseach-mcp tools'); ARGUMENTS is a JSON object, or - to read it
from stdin (default {}); what is not a JSON object is refused, saying where (line and
column) it goes wrong.

With --task the call runs as a task, as a client that can take one runs it (the tool's
manifest must allow it: execution.taskSupport): its status and the backend's progress are
shown on stderr as they change, and Ctrl-C cancels it. A tool whose taskSupport is
required runs only so.

The exit status is 0 for a result, 1 when the result is an error (isError: the backend's
error, a backend that is down, arguments that fail the inputSchema, ...) or the task did not
complete, 2 for arguments that are not a JSON object and other wrong usage, and 3 when no
tool answers to NAME.`,
		Example: `  tairseach-mcp call tairseach_system_info
  tairseach-mcp call tairseach_notes_create '{"title":"groceries","body":"oat milk"}'
  echo '{"path":"."}' | tairseach-mcp call tairseach_files_list -
  tairseach-mcp call --task tairseach_notes_import '{"count":20}'`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd.Context(), e, opts, args, asJSON, yes, asTask)
		},
	}
	opts.register(cmd.Flags(), catalogFlags|filterFlags|policyFlags|backendFlags|checkFlags|logFlags|auditFlags, "task-timeout")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole MCP result (content, structuredContent, isError) as JSON")
	cmd.Flags().BoolVar(&yes, "yes", false, "answer yes when the tool asks before it runs (without it, call asks on the terminal, and refuses in a script)")
	cmd.Flags().BoolVar(&asTask, "task", false, "run the call as a task: show its status and progress on stderr as it runs; Ctrl-C cancels it")
	return cmd
}

func runCall(ctx context.Context, e *env, opts *options, args []string, asJSON, yes, asTask bool) error {
	if err := requireManifests(opts.manifests); err != nil {
		return err
	}
	arguments := []byte("{}")
	if len(args) == 2 {
		arguments = []byte(args[1])
		if args[1] == "-" {
			b, err := io.ReadAll(e.stdin)
			if err != nil {
				return fmt.Errorf("read arguments from stdin: %w", err)
			}
			arguments = b
		}
	}
	arguments = bytes.TrimSpace(arguments)
	if err := checkArguments(arguments); err != nil {
		return usageError{err}
	}
	// The output is the result; manifest warnings and call logs would
	// only clutter it, unless --log-level asks for them.
	level := opts.logLevel
	if !opts.logLevelSet {
		level = "error"
	}
	log, flushLog := newLogger(e.stderr, level, opts.logFormat)
	defer flushLog()
	backend := newBackend(opts, &log)
	defer backend.Close()
	rec, closeAudit := openAudit(opts.audit, &log)
	defer closeAudit()
	reg := newRegistry(opts, backend, &log, nil, rec)
	name := args[0]
	if opts.toolMode != "search" {
		var err error
		if name, err = resolveTool(reg.Snapshot(), opts.prefix, name); err != nil {
			return unknownToolError{err}
		}
	}
	ask := askOnTerminal(e, yes, len(args) == 2 && args[1] == "-")
	var res *protocol.CallToolResult
	var err error
	if asTask {
		res, err = callAsTask(ctx, e, opts, &log, reg, name, arguments, ask)
		var rpcErr *protocol.Error
		switch {
		case errors.As(err, &rpcErr) && rpcErr.Code == protocol.CodeInvalidParams && strings.Contains(rpcErr.Message, "unknown tool"):
			return unknownToolError{fmt.Errorf("%s; run 'tairseach-mcp tools' to list the tools", rpcErr.Message)}
		case errors.As(err, &rpcErr) && rpcErr.Code == protocol.CodeMethodNotFound:
			return usageError{fmt.Errorf("%s (the manifest's execution.taskSupport says whether a tool runs as a task)", rpcErr.Message)}
		case err != nil:
			fmt.Fprintln(e.stderr, safetext.Line(err.Error()))
			return exitStatus(exitError)
		}
	} else {
		if reg.Snapshot().Tools().TaskSupport(name) == protocol.TaskRequired {
			return usageError{fmt.Errorf("%s runs only as a task: call it with --task", name)}
		}
		// The audit log records this call as the call command's.
		call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: "tairseach-mcp call", Version: version()}, Transport: "cli", Ask: ask})
		if res, err = toolProvider(opts, reg).CallTool(ctx, call, &protocol.CallToolRequest{Name: name, Arguments: arguments}); err != nil {
			// CallTool fails only for a name no tool answers to.
			return unknownToolError{fmt.Errorf("%s; run 'tairseach-mcp tools' to list the tools", protocol.WireError(err).Message)}
		}
	}
	if asJSON {
		out := map[string]any{"content": res.Content, "isError": res.IsError}
		if len(res.StructuredContent) > 0 {
			out["structuredContent"] = res.StructuredContent
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		w := e.stdout
		if res.IsError {
			w = e.stderr
		}
		for _, c := range res.Content {
			fmt.Fprintln(w, prettyJSON(c.String()))
		}
	}
	if res.IsError {
		return exitStatus(exitError)
	}
	return nil
}

// checkArguments checks that args are one JSON object. It says what is
// wrong otherwise, and where, by line and column as validate does.
func checkArguments(args []byte) error {
	var v jsontext.Value
	err := json.Unmarshal(args, &v)
	var se *jsontext.SyntacticError
	switch {
	case len(args) == 0:
		return errors.New(`the arguments are empty: give a JSON object, like '{"key":"value"}', or leave them out for {}`)
	case errors.As(err, &se):
		off := min(int(se.ByteOffset), len(args))
		line := bytes.Count(args[:off], []byte{'\n'}) + 1
		col := off - bytes.LastIndexByte(args[:off], '\n')
		return fmt.Errorf("the arguments are not valid JSON: line %d, column %d: %v", line, col, se.Err)
	case err != nil:
		return fmt.Errorf("the arguments are not valid JSON: %v", err)
	case v.Kind() != '{':
		return fmt.Errorf(`the arguments must be a JSON object, like '{"key":"value"}', not %s`, kindName(v.Kind()))
	}
	return nil
}

// kindName names a JSON value's kind, for messages.
func kindName(k jsontext.Kind) string {
	switch k {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	}
	return "null"
}

// resolveTool finds the client name of the tool a person means: its
// client name, its manifest name (notes.create), or its name without the
// prefix, when only one tool answers to it. A tool that is declared but
// not served, or a name close to others, is said so.
func resolveTool(snap *registry.Snapshot, prefix, typed string) (string, error) {
	var served []names
	for _, e := range snap.Entries {
		served = append(served, names{e.Name, e.Tool.Name})
	}
	return resolveName("tool", prefix, typed, served, func() error {
		for _, u := range snap.Unserved {
			if u.Name == typed || u.Tool == typed {
				return fmt.Errorf("%s (%s in %s) is not served: %s", safetext.Line(typed), u.Path, safetext.Line(u.File), u.Reason)
			}
		}
		return nil
	})
}

// names are the names of a tool or prompt: the client's and the manifest's.
type names struct{ client, manifest string }

// resolveName finds the client name of the tool or prompt (kind) a
// person typed, among those served; unserved returns why one declared
// but not served is not, or nil.
func resolveName(kind, prefix, typed string, served []names, unserved func() error) (string, error) {
	withPrefix, _ := registry.ClientName(prefix, typed)
	var all, matches []string
	for _, n := range served {
		if n.client == typed {
			return typed, nil
		}
		all = append(all, n.client, n.manifest)
		if n.manifest == typed || n.client == withPrefix {
			matches = append(matches, n.client)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
	default:
		return "", fmt.Errorf("%q could be %s; give the full name", typed, strings.Join(matches, " or "))
	}
	if err := unserved(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("unknown %s %q%s; run 'tairseach-mcp %ss' to list them", kind, typed, didYouMean(suggest(typed, all)), kind)
}

// prettyJSON indents text that is JSON and returns other text unchanged.
func prettyJSON(text string) string {
	v := jsontext.Value(text)
	if v.Indent(jsontext.WithIndent("  ")) != nil {
		return text
	}
	return string(v)
}

// writeJSON writes v to w as indented JSON and a newline: the --json
// output of call, tools, validate and doctor.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v, jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func joinPaths(ps []string) string { return strings.Join(ps, ", ") }

// askOnTerminal asks the person at the terminal before a tool that asks
// first runs: yes with --yes, else y/N on stdin when it is a terminal
// (and not where the arguments came from); in a script, it refuses.
func askOnTerminal(e *env, yes, stdinUsed bool) protocol.Asker {
	return func(ctx context.Context, q protocol.Question) (protocol.Answer, error) {
		if yes {
			return protocol.Answer{Action: "accept", Allowed: true}, nil
		}
		if stdinUsed || !isTerminal(e.stdin) {
			return protocol.Answer{}, errors.New("nobody at a terminal to ask; pass --yes to allow it from a script")
		}
		fmt.Fprintf(e.stderr, "%s [y/N] ", safetext.Text(q.Message))
		answer := make(chan string, 1)
		go func() { // ends at the person's answer, or with the process
			line, _ := bufio.NewReader(e.stdin).ReadString('\n')
			answer <- strings.ToLower(strings.TrimSpace(line))
		}()
		select {
		case a := <-answer:
			if a == "y" || a == "yes" {
				return protocol.Answer{Action: "accept", Allowed: true}, nil
			}
			return protocol.Answer{Action: "decline"}, nil
		case <-ctx.Done():
			fmt.Fprintln(e.stderr)
			return protocol.Answer{}, ctx.Err()
		}
	}
}
