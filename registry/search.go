package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/registry/internal/toolsearch"
)

// Search serves a registry in search mode: clients see two tools,
// <prefix>_find_tools and <prefix>_call_tool, instead of the catalogue,
// which costs a large install's clients a fraction of the tokens. It is
// a protocol.ToolProvider and safe for concurrent use.
//
// The two tools' listing is made once, at the first load, and never
// changes, so a client's prompt cache stays valid across reloads;
// find_tools always searches the current snapshot, and call_tool calls
// exactly as a direct tools/call would (the registry's filters included).
type Search struct {
	reg        *Registry
	snapshot   func() *Snapshot // what it searches and calls: the registry's, or a client's view
	find, call *Entry
	listing    func() *protocol.ToolSet
	idx        atomic.Pointer[snapIndex]
	usage      *usage // set by Learn, before serving; nil when not learning
}

// snapIndex is the search index of one snapshot's tools.
type snapIndex struct {
	snap *Snapshot
	ix   *toolsearch.Index
}

// Limits of find_tools' results.
const (
	defaultFindLimit = 5
	maxFindLimit     = 20
)

// maxGroupsText bounds the bytes of find_tools' description spent on
// naming the groups of tools (about 750 tokens).
const maxGroupsText = 3000

var (
	findSchema = []byte(`{"type":"object","properties":{` +
		`"query":{"type":"string","minLength":1,"description":"The task in a few words, e.g. \"reply to an email\" or \"sleep last night\"."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20,"default":5,"description":"Most tools to return (default 5)."}},` +
		`"required":["query"],"additionalProperties":false}`)
	callSchema = []byte(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The tool's exact name, as find_tools gave it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, matching the inputSchema find_tools gave."}},` +
		`"required":["name"],"additionalProperties":false}`)
)

// NewSearch returns the search-mode view of r.
func NewSearch(r *Registry) *Search {
	m := &manifest.Manifest{File: "(search mode)"}
	tool := func(name string, schema []byte) *Entry {
		client, _ := ClientName(r.opts.Prefix, name)
		return newEntry(client, m, &manifest.Tool{Name: name, InputSchema: schema})
	}
	s := &Search{reg: r, snapshot: r.Snapshot, find: tool("find_tools", findSchema), call: tool("call_tool", callSchema)}
	s.listing = sync.OnceValue(s.makeListing)
	return s
}

// Over returns the search-mode view of v, a client's view of the same
// registry: find_tools finds, and call_tool calls, only what v serves.
// It learns with s (see Learn): call Over after Learn.
func (s *Search) Over(v *View) *Search {
	o := &Search{reg: s.reg, snapshot: v.Snapshot, find: s.find, call: s.call, usage: s.usage}
	o.listing = sync.OnceValue(o.makeListing)
	return o
}

// Tools returns the two tools, waiting for the first load; part of
// protocol.ToolProvider.
func (s *Search) Tools() *protocol.ToolSet {
	<-s.reg.loaded
	return s.listing()
}

func (s *Search) makeListing() *protocol.ToolSet {
	snap := s.snapshot()
	yes := true
	find := protocol.Tool{
		Name:  s.find.Name,
		Title: "Find tools",
		Description: fmt.Sprintf("Find the tools of this server that can do a task: returns their names, descriptions and input schemas, best match first. "+
			"Call this first, then run the tool with %s. The server has %d tools in these groups:\n%s\n"+
			"Describe the task in a few everyday words.", s.call.Name, len(snap.Entries), groups(snap)),
		InputSchema: findSchema,
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &yes, IdempotentHint: &yes},
	}
	call := protocol.Tool{
		Name:  s.call.Name,
		Title: "Call a tool",
		Description: fmt.Sprintf("Run a tool that %s found, by its exact name, with arguments matching its inputSchema. "+
			"The result is the tool's own, errors included.", s.find.Name),
		InputSchema: callSchema,
	}
	if snap.rules.readOnly() {
		call.Annotations = &protocol.ToolAnnotations{ReadOnlyHint: &yes}
	}
	return protocol.NewToolSet([]protocol.Tool{find, call})
}

// groups names the groups of served tools, one line each: the manifest's
// name, its number of tools and the first sentence of its description;
// names only when that would be too long, and at most maxGroupsText
// bytes in any case, the last line counting the groups left out.
func groups(snap *Snapshot) string {
	type group struct {
		name, about string
		n           int
	}
	var gs []*group
	byName := map[string]*group{}
	for _, e := range snap.Entries {
		name := cmp.Or(e.Manifest.Name, e.Manifest.ID)
		g := byName[name]
		if g == nil {
			g = &group{name: name, about: firstSentence(e.Manifest.Description)}
			byName[name] = g
			gs = append(gs, g)
		}
		g.n++
	}
	for _, long := range []bool{true, false} {
		var b strings.Builder
		for i, g := range gs {
			line := fmt.Sprintf("- %s (%d)", g.name, g.n)
			if long && g.about != "" {
				line += ": " + g.about
			}
			if i > 0 {
				line = "\n" + line
			}
			// Names only: keep room for the line that counts the rest.
			var rest string
			if !long && i < len(gs)-1 {
				rest = fmt.Sprintf("\n- and %d more groups", len(gs)-i-1)
			}
			if b.Len()+len(line)+len(rest) > maxGroupsText {
				if long {
					break
				}
				if i > 0 {
					b.WriteByte('\n')
				}
				fmt.Fprintf(&b, "- and %d more groups", len(gs)-i)
				return b.String()
			}
			b.WriteString(line)
			if i == len(gs)-1 {
				return b.String()
			}
		}
	}
	return "- none yet"
}

// firstSentence returns text up to the end of its first sentence.
func firstSentence(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i+1]
	}
	return text
}

// Learn makes find_tools learn from use: tools this user calls often, or
// called right after find_tools found them, win ties and near-ties
// (hits within 5% of the top score). It reads the end of the audit log
// at path (at most 4 MiB) and then follows the calls the registry
// records, which it does only with an audit log (Options.Audit). What
// it learns is bounded, deterministic for a given log, and moves no
// tool past one that scored more than 5% above it. Call Learn before
// serving; a log that cannot be read teaches nothing and is reported.
func (s *Search) Learn(path string) error {
	u := newUsage()
	err := u.read(path)
	learn := u.learn
	s.reg.onRecord.Store(&learn)
	s.usage = u
	return err
}

// CallTool runs find_tools or call_tool; any other name is an unknown
// tool. Part of protocol.ToolProvider. The audit log records find_tools
// as itself, and call_tool as the tool it runs.
func (s *Search) CallTool(ctx context.Context, call *protocol.Call, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	start := time.Now()
	s.reg.started(call, audit.KindTool, req.Name, start)
	args := objectArgs(req.Arguments)
	var e *Entry
	switch req.Name {
	case s.find.Name:
		e = s.find
	case s.call.Name:
		e = s.call
	default:
		s.reg.record(call, req, start, called{args: args, outcome: outcomeUnknownTool})
		return nil, fmt.Errorf("%w: unknown tool %q", protocol.ErrInvalidParams, req.Name)
	}
	schemas, err := e.schemas()
	if err != nil {
		return nil, err // fixed schemas: never happens
	}
	res, outcome := s.reg.checkArguments(ctx, call, e, schemas.in, args)
	switch {
	case res == nil && e == s.call:
		return s.callTool(ctx, call, req, args, start)
	}
	var found []string
	if res == nil {
		res, outcome, found = s.findTools(ctx, args)
	}
	s.reg.record(call, req, start, called{entry: e, args: args, res: res, outcome: outcome, found: found})
	return res, nil
}

// findTools answers find_tools, and returns the client names of the
// tools found, for the audit log.
func (s *Search) findTools(ctx context.Context, args jsontext.Value) (*protocol.CallToolResult, string, []string) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return protocol.TextResult(fmt.Sprintf("Invalid arguments for %s: %v", s.find.Name, err), true), outcomeInvalidArguments, nil
	}
	if in.Limit == 0 {
		in.Limit = defaultFindLimit
	}
	if res := s.reg.waitLoaded(ctx); res != nil {
		return res, outcomeCancelled, nil
	}
	snap := s.snapshot()
	type found struct {
		Name        string                    `json:"name"`
		Title       string                    `json:"title,omitzero"`
		Description string                    `json:"description"`
		Why         string                    `json:"why"`
		InputSchema jsontext.Value            `json:"inputSchema"`
		Annotations *protocol.ToolAnnotations `json:"annotations,omitzero"`
	}
	out := struct {
		Tools   []found  `json:"tools"`
		Closest []string `json:"closest,omitzero"`
		Note    string   `json:"note,omitzero"`
	}{Tools: []found{}}
	var prior func(int) float64
	if s.usage != nil {
		prior = func(i int) float64 { return s.usage.prior(snap.Entries[i].Name) }
	}
	ix := s.indexOf(snap)
	var names []string
	for _, h := range ix.Search(in.Query, min(in.Limit, maxFindLimit), prior) {
		e := snap.Entries[h.Doc]
		out.Tools = append(out.Tools, found{e.Name, e.Tool.Title, e.Tool.Description, why(h), e.Tool.InputSchema, annotations(e.Tool.Annotations)})
		names = append(names, e.Name)
	}
	if len(out.Tools) == 0 {
		for _, i := range ix.Closest(in.Query, maxClosest) {
			out.Closest = append(out.Closest, snap.Entries[i].Name)
		}
		out.Note = "No tool matches these words. Search again with other words for the task or for what it acts on"
		if len(out.Closest) > 0 {
			out.Note += "; the tools whose names look most like the request are in closest"
		}
		out.Note += "."
	}
	b, err := json.Marshal(out)
	if err != nil {
		return protocol.TextResult(fmt.Sprintf("Cannot encode the tools found: %v", err), true), outcomeFailed, nil
	}
	s.reg.log.Debug().Str("tool", s.find.Name).Int("found", len(out.Tools)).Msg("tool search")
	res := protocol.TextResult(string(b), false)
	res.StructuredContent = b
	return res, outcomeOK, names
}

// maxClosest is how many names an empty answer suggests.
const maxClosest = 3

// why says in a few words why a tool matched: each of the request's
// words it matched, where, and as what word when another ("answer as
// reply (name)"), then the words it did not match, so that a model can
// tell a near miss from a match.
func why(h toolsearch.Hit) string {
	var b strings.Builder
	for i, m := range h.Matched {
		if i > 0 {
			b.WriteString(", ")
		}
		if m.Phrase {
			fmt.Fprintf(&b, "%q", m.Word)
		} else {
			b.WriteString(m.Word)
		}
		if m.As != "" && m.As != m.Word {
			fmt.Fprintf(&b, " as %s", m.As)
		}
		fmt.Fprintf(&b, " (%s)", m.Field)
	}
	if len(h.Missed) > 0 {
		fmt.Fprintf(&b, "; not %s", strings.Join(h.Missed, ", "))
	}
	return b.String()
}

// indexOf returns the search index of snap's tools, made on first use
// and kept while snap is the one searched.
func (s *Search) indexOf(snap *Snapshot) *toolsearch.Index {
	if c := s.idx.Load(); c != nil && c.snap == snap {
		return c.ix
	}
	ix := toolsearch.New(searchDocs(snap), toolsearch.Options{})
	s.idx.Store(&snapIndex{snap, ix})
	return ix
}

// searchDocs returns what the search knows of snap's tools, in order.
func searchDocs(snap *Snapshot) []toolsearch.Doc {
	docs := make([]toolsearch.Doc, len(snap.Entries))
	for i, e := range snap.Entries {
		docs[i] = toolsearch.Doc{
			Name: e.Tool.Name, Title: e.Tool.Title, Description: e.Tool.Description,
			Params: params(e.Tool.InputSchema), ReadOnly: readOnly(e.Tool),
			Group: strings.Join([]string{e.Manifest.Name, e.Manifest.Description, e.Manifest.Category}, " "),
		}
	}
	return docs
}

// params returns the names and descriptions of a schema's properties,
// sorted by name so the text does not depend on map order.
func params(schema jsontext.Value) string {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	var words []string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		words = append(words, name, s.Properties[name].Description)
	}
	return strings.Join(words, " ")
}

// callTool runs the tool call_tool names, as a tools/call of the same
// client would: the audit log records that tool.
func (s *Search) callTool(ctx context.Context, call *protocol.Call, req *protocol.CallToolRequest, args jsontext.Value, start time.Time) (*protocol.CallToolResult, error) {
	var in struct {
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		res := protocol.TextResult(fmt.Sprintf("Invalid arguments for %s: %v", s.call.Name, err), true)
		s.reg.record(call, req, start, called{entry: s.call, args: args, res: res, outcome: outcomeInvalidArguments})
		return res, nil
	}
	inner := *req
	inner.Name, inner.Arguments = in.Name, in.Arguments
	res, err := s.reg.callTool(ctx, call, &inner, s.snapshot)
	if errors.Is(err, protocol.ErrInvalidParams) {
		// The name is an argument here, so an unknown one is the
		// caller's mistake to correct, like any invalid argument.
		return protocol.TextResult(fmt.Sprintf("Unknown tool %q: this server offers no tool of that name. Call %s to find the right tool and its exact name.", in.Name, s.find.Name), true), nil
	}
	return res, err
}
