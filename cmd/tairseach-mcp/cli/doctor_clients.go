package cli

// The doctor's checks against MCP clients: the limits their tool lists
// meet, and the bridge's entry in each one's config file (an entry that
// reaches a bridge serving HTTP: doctor_url.go).

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
)

// Limits of common clients the tool list is held against.
const (
	cursorTools   = 40  // Cursor sends the model only the first 40 tools
	cursorLoses   = 80  // past this, Cursor loses more of the list than it uses
	openAITools   = 128 // OpenAI's API refuses a request with more tools
	contextTokens = 200_000
	listShare     = 10 // percent of contextTokens a tool list may take
)

// checkToolList holds the tools/list response a client received against
// the limits of common clients: the number of tools, and their share of
// a model's context.
func checkToolList(line []byte) []result {
	var resp struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if line == nil || json.Unmarshal(line, &resp) != nil {
		return []result{{"tool list", statusInfo, "not measured: the bridge did not answer tools/list (see stdout)", ""}}
	}
	tools := resp.Result.Tools
	n, page := len(tools), ""
	if resp.Result.NextCursor != "" {
		page = " on the first page alone"
	}
	narrow := "serve fewer tools: --tool-mode search lists two instead of all, or --include/--exclude/--read-only narrow them (docs/tools.md)"
	count := result{"tool count", statusOK, fmt.Sprintf("%d%s: within Cursor's %d and OpenAI's %d", n, page, cursorTools, openAITools), ""}
	switch {
	case n > openAITools:
		count = count.warn(fmt.Sprintf("%d%s: OpenAI's API refuses more than %d tools in a request, and Cursor uses only the first %d", n, page, openAITools, cursorTools), narrow)
	case n > cursorLoses:
		count = count.warn(fmt.Sprintf("%d: Cursor uses only the first %d; the other %d, from %s on, are lost to it", n, cursorTools, n-cursorTools, tools[cursorTools].Name), narrow)
	case n > cursorTools:
		count = count.warn(fmt.Sprintf("%d: Cursor uses only the first %d", n, cursorTools), narrow)
	}
	tokens := estimateTokens(string(line))
	limit := contextTokens * listShare / 100
	size := result{"tool list", statusOK, fmt.Sprintf("%d bytes%s, about %d tokens: %.1f%% of a %dk-token context", len(line), page, tokens, 100*float64(tokens)/contextTokens, contextTokens/1000), ""}
	if tokens > limit {
		size = size.warn(size.Message+fmt.Sprintf(", more than the %d%% (%d tokens) a tool list should take", listShare, limit), narrow)
	}
	return []result{count, size}
}

// checkClients checks the bridge's entry in each client found here.
func checkClients(ctx context.Context, m clientconfig.Machine, exe, name string) []result {
	var rs []result
	for _, c := range clientconfig.Clients() {
		if c.Found(m) {
			rs = append(rs, checkClient(ctx, m, c, exe, name))
		}
	}
	if len(rs) == 0 {
		return []result{{"clients", statusInfo, "none found (looked for " + clientNames() + ")", ""}}
	}
	return rs
}

func checkClient(ctx context.Context, m clientconfig.Machine, c clientconfig.Client, exe, name string) result {
	r := result{Name: c.Name}
	f, err := c.Read(m)
	if err != nil {
		return r.fail(err.Error(), "") // Read says what to do
	}
	v, ok := f.Server(name)
	if !ok {
		return r.info(f.Path+": the bridge is not installed", "tairseach-mcp install "+c.Name)
	}
	reinstall := "tairseach-mcp install " + c.Name + " --force, with the flags it should run with"
	entry, ok := clientconfig.ParseEntry(v)
	if !ok {
		return r.fail(fmt.Sprintf("%s: %q is neither a command nor a URL entry", f.Path, name), reinstall)
	}
	if u, ok := entry.(clientconfig.URLEntry); ok {
		return checkURLEntry(ctx, r, f.Path, c, u)
	}
	e := entry.(clientconfig.CommandEntry)
	real, err := clientconfig.ResolveCommand(e.Command)
	if err != nil {
		return r.fail(fmt.Sprintf("%s: the command %s does not exist", f.Path, e.Command), reinstall)
	}
	if err := parseServerArgs(e.Args); err != nil {
		return r.fail(fmt.Sprintf("%s: the bridge would refuse its args: %v", f.Path, err), reinstall)
	}
	if real != exe {
		return r.warn(fmt.Sprintf("%s: runs another binary, %s", f.Path, e.Command), reinstall+", to run this one ("+exe+")")
	}
	return r.ok(fmt.Sprintf("%s: runs this binary, %s", f.Path, plural(len(e.Args), "flag")))
}

// parseServerArgs parses a client's args for the bridge as the server
// would: with a fresh root command, and no environment of ours.
func parseServerArgs(args []string) error {
	root := newRootCmd(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		getenv: func(string) (string, bool) { return "", false }})
	if err := root.ParseFlags(args); err != nil {
		return flagError(root, err)
	}
	if rest := root.Flags().Args(); len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	return root.PersistentPreRunE(root, nil)
}
