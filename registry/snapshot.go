package registry

import (
	"fmt"
	"sync"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
)

// Snapshot is one immutable version of the tool table, with the
// resources, resource templates and prompts. It is safe for concurrent
// use; nothing in it changes after it is published.
type Snapshot struct {
	// Entries are the served tools in the order clients see them: by
	// manifest folder, file path, then position in the file.
	Entries []*Entry
	// Resources, Templates and Prompts are the served resources, resource
	// templates and prompts, in the same order.
	Resources []*ResourceEntry
	Templates []*TemplateEntry
	Prompts   []*PromptEntry
	// Problems are every problem of the manifests the snapshot was built
	// from, including naming conflicts.
	Problems []manifest.Problem
	// Unserved are the tools of the manifests that clients do not see, and why.
	Unserved []Unserved
	// UnservedContent are the resources, templates and prompts of the
	// manifests that clients do not see, and why.
	UnservedContent []UnservedContent

	byName     map[string]*Entry
	byURI      map[string]*ResourceEntry
	byTemplate map[string]*TemplateEntry // by uriTemplate
	byPrompt   map[string]*PromptEntry   // by client name
	tools      *protocol.ToolSet
	resources  *protocol.ResourceSet
	prompts    *protocol.PromptSet
	naming     []manifest.Problem // conflicts of names, URIs and embedded resources
	renames    []manifest.Problem // names the client-safe mapping changed
	rules      rules              // what decided what it serves
	ms         []*manifest.Manifest
}

// Entry is one served tool.
type Entry struct {
	// Name is the client-visible name.
	Name string
	// Method is the backend method, exactly as the manifest spells it.
	Method string
	// File is the manifest file that declares the tool.
	File string
	// Tool is the manifest's declaration.
	Tool *manifest.Tool
	// Manifest is the manifest that declares the tool.
	Manifest *manifest.Manifest
	// Confirm says why the user is asked before each call; nil when
	// they are not.
	Confirm *ConfirmReason

	// schemas compiles Tool's schemas on the tool's first call, once:
	// most tools of a large set are never called, and compiled schemas
	// are big.
	schemas func() (compiledSchemas, error)
}

// compiledSchemas are a tool's compiled input and output schemas; out is
// nil when the tool declares none.
type compiledSchemas struct{ in, out *manifest.Schema }

func newEntry(name string, m *manifest.Manifest, t *manifest.Tool) *Entry {
	return &Entry{Name: name, Method: t.Method, File: m.File, Tool: t, Manifest: m,
		schemas: sync.OnceValues(func() (compiledSchemas, error) {
			in, out, err := manifest.CompileSchemas(t)
			return compiledSchemas{in, out}, err
		})}
}

// origin names where e is declared, as file:tools[i].
func (e *Entry) origin() string { return e.File + ":" + e.Tool.Path() }

// Lookup returns the entry a client calls by name.
func (s *Snapshot) Lookup(name string) (*Entry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Tools returns the tool set clients see.
func (s *Snapshot) Tools() *protocol.ToolSet { return s.tools }

// ResourceSet returns the resources and templates clients see.
func (s *Snapshot) ResourceSet() *protocol.ResourceSet { return s.resources }

// PromptSet returns the prompts clients see.
func (s *Snapshot) PromptSet() *protocol.PromptSet { return s.prompts }

// build assigns client names to the servable tools of ms (in order) and
// returns the snapshot of those the rules let through. The first tool to
// claim a name keeps it; a later one with the same backend method is the
// same tool, served once, and one with another method is reported and not
// served, so the outcome depends only on the files, never on timing.
// Names are claimed before filtering, so filters never change who wins.
// base, when set, is a snapshot of the same ms whose entries' compiled
// schemas the new one shares (a client's view of it).
func build(ru rules, ms []*manifest.Manifest, base *Snapshot) *Snapshot {
	prefix := ru.prefix
	s := &Snapshot{byName: map[string]*Entry{}, rules: ru, ms: ms}
	claimed := map[string]*Entry{}
	var tools []protocol.Tool
	for _, m := range ms {
		for _, t := range m.Tools {
			name, changed := ClientName(prefix, t.Name)
			unserved := Unserved{Name: name, Tool: t.Name, File: m.File, Path: t.Path(), Reason: unservable(t)}
			prev, dup := claimed[name]
			switch {
			case unserved.Reason != "":
			case dup && prev.Method == t.Method:
				unserved.Reason, unserved.Folded = fmt.Sprintf("same tool as %s (tool %q, same backend method %q); served once", prev.origin(), prev.Tool.Name, t.Method), true
			case dup:
				s.naming = append(s.naming, manifest.Problem{
					File: m.File, Path: t.Path() + ".name", Tool: t.Name, Severity: manifest.Error,
					Message: fmt.Sprintf("client name %q is already used by %s (tool %q); not served", name, prev.origin(), prev.Tool.Name),
				})
				unserved.Reason = fmt.Sprintf("client name already used by %s (tool %q)", prev.origin(), prev.Tool.Name)
			default:
				e := newEntry(name, m, t)
				if be := base.entry(name); be != nil && be.Tool == t {
					e.schemas = be.schemas // compiled once, whoever calls first
				}
				claimed[name] = e
				if changed {
					s.renames = append(s.renames, manifest.Problem{
						File: m.File, Path: t.Path() + ".name", Tool: t.Name, Severity: manifest.Warning,
						Message: fmt.Sprintf("clients see this tool as %q (names must match ^[a-zA-Z0-9_-]{1,64}$)", name),
					})
				}
				if unserved.Reason = ru.reason(name, t); unserved.Reason != "" {
					unserved.Filtered = true
					break
				}
				e.Confirm = ru.confirmReason(name, t)
				s.byName[name] = e
				s.Entries = append(s.Entries, e)
				tools = append(tools, protocolTool(name, t))
				continue
			}
			s.Unserved = append(s.Unserved, unserved)
		}
	}
	s.tools = protocol.NewToolSet(tools)
	s.buildContent(ru, ms, base)
	return s
}

// entry returns the entry s serves as name; nil when it serves none, or
// s is nil.
func (s *Snapshot) entry(name string) *Entry {
	if s == nil {
		return nil
	}
	return s.byName[name]
}

func protocolTool(name string, t *manifest.Tool) protocol.Tool {
	return protocol.Tool{
		Name:         name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
		Annotations:  annotations(t.Annotations),
		Execution:    execution(t.Execution),
		ParamHeaders: paramHeaders(t.Headers),
	}
}

// execution returns how a tool's calls may run, as clients see it; nil
// when they never run as tasks.
func execution(e *manifest.Execution) *protocol.ToolExecution {
	if e == nil || e.TaskSupport == "" || e.TaskSupport == string(protocol.TaskForbidden) {
		return nil
	}
	return &protocol.ToolExecution{TaskSupport: protocol.TaskSupport(e.TaskSupport)}
}

// paramHeaders returns the parameters a tool's clients mirror into
// headers, as the manifest's inputSchema marks them.
func paramHeaders(hs []manifest.Header) []protocol.ParamHeader {
	var out []protocol.ParamHeader
	for _, h := range hs {
		out = append(out, protocol.ParamHeader{Name: h.Name, Path: h.Path})
	}
	return out
}

// annotations returns a tool's hints as clients see them; nil when the
// manifest gives none.
func annotations(a *manifest.Annotations) *protocol.ToolAnnotations {
	if a == nil || *a == (manifest.Annotations{}) {
		return nil
	}
	return &protocol.ToolAnnotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
		IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
}
