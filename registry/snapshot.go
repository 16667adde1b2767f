package registry

import (
	"fmt"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
)

// Snapshot is one immutable version of the tool table. It is safe for
// concurrent use; nothing in it changes after it is published.
type Snapshot struct {
	// Entries are the served tools in the order clients see them: by
	// manifest folder, file path, then position in the file.
	Entries []*Entry
	// Problems are every problem of the manifests the snapshot was built
	// from, including naming conflicts.
	Problems []manifest.Problem

	byName  map[string]*Entry
	tools   *protocol.ToolSet
	naming  []manifest.Problem // name conflicts
	renames []manifest.Problem // names the client-safe mapping changed
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

	// schemas compiles Tool's schemas on the tool's first call, once:
	// most tools of a large set are never called, and compiled schemas
	// are big.
	schemas func() (compiledSchemas, error)
}

// compiledSchemas are a tool's compiled input and output schemas; out is
// nil when the tool declares none.
type compiledSchemas struct{ in, out *jsonschema.Schema }

func newEntry(name, file string, t *manifest.Tool) *Entry {
	return &Entry{Name: name, Method: t.Method, File: file, Tool: t,
		schemas: sync.OnceValues(func() (compiledSchemas, error) {
			in, out, err := manifest.CompileSchemas(t)
			return compiledSchemas{in, out}, err
		})}
}

// Lookup returns the entry a client calls by name.
func (s *Snapshot) Lookup(name string) (*Entry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// IsRename reports whether p only says that the client-safe mapping
// changed a tool's name: worth listing in validate, not worth a warning
// in the log, since most real manifests use dotted names.
func (s *Snapshot) IsRename(p manifest.Problem) bool { return slices.Contains(s.renames, p) }

// Tools returns the tool set clients see.
func (s *Snapshot) Tools() *protocol.ToolSet { return s.tools }

// build assigns client names to the servable tools of ms (in order) and
// returns the snapshot. The first tool to claim a name keeps it; a later
// one is reported and not served, so the outcome depends only on the
// files, never on timing.
func build(prefix string, ms []*manifest.Manifest) *Snapshot {
	s := &Snapshot{byName: map[string]*Entry{}}
	var tools []protocol.Tool
	for _, m := range ms {
		for _, t := range m.Tools {
			if !t.Servable() {
				continue
			}
			name, changed := ClientName(prefix, t.Name)
			if prev, dup := s.byName[name]; dup {
				s.naming = append(s.naming, manifest.Problem{
					File: m.File, Path: t.Path() + ".name", Tool: t.Name, Severity: manifest.Error,
					Message: fmt.Sprintf("client name %q is already used by %s (tool %q); not served", name, prev.File+":"+prev.Tool.Path(), prev.Tool.Name),
				})
				continue
			}
			if changed {
				s.renames = append(s.renames, manifest.Problem{
					File: m.File, Path: t.Path() + ".name", Tool: t.Name, Severity: manifest.Warning,
					Message: fmt.Sprintf("clients see this tool as %q (names must match ^[a-zA-Z0-9_-]{1,64}$)", name),
				})
			}
			e := newEntry(name, m.File, t)
			s.byName[name] = e
			s.Entries = append(s.Entries, e)
			tools = append(tools, protocolTool(name, t))
		}
	}
	s.tools = protocol.NewToolSet(tools)
	return s
}

func protocolTool(name string, t *manifest.Tool) protocol.Tool {
	pt := protocol.Tool{
		Name:         name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
	}
	if a := t.Annotations; a != nil {
		pt.Annotations = &protocol.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	return pt
}
