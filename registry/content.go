package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
)

// ResourceEntry is one served resource.
type ResourceEntry struct {
	// File is the manifest file that declares the resource.
	File     string
	Resource *manifest.Resource
	Manifest *manifest.Manifest
}

// origin names where e is declared, as file:resources[i].
func (e *ResourceEntry) origin() string { return e.File + ":" + e.Resource.Path() }

// TemplateEntry is one served resource template.
type TemplateEntry struct {
	File     string
	Template *manifest.ResourceTemplate
	Manifest *manifest.Manifest
	// Complete maps each variable that can be completed to its method:
	// the template's, less those a filter keeps from clients.
	Complete map[string]string

	// schema compiles the variables' schema on the first read, once.
	schema func() (*manifest.Schema, error)
}

func (e *TemplateEntry) origin() string { return e.File + ":" + e.Template.Path() }

// PromptEntry is one served prompt.
type PromptEntry struct {
	// Name is the client-visible name.
	Name     string
	File     string
	Prompt   *manifest.Prompt
	Manifest *manifest.Manifest
	// Complete maps each argument that can be completed to its method,
	// as TemplateEntry.Complete does.
	Complete map[string]string
}

func (e *PromptEntry) origin() string { return e.File + ":" + e.Prompt.Path() }

// UnservedContent is a resource, resource template or prompt of a loaded
// manifest that clients do not see.
type UnservedContent struct {
	// Kind is "resource", "resourceTemplate" or "prompt".
	Kind string `json:"kind"`
	// Name is what clients would know it by: a URI, a URI template, or a
	// prompt's client name; ManifestName the manifest's own name for it.
	Name         string `json:"name"`
	ManifestName string `json:"manifestName"`
	File         string `json:"file"`
	Path         string `json:"path"`
	// Reason says why, in words for a person.
	Reason string `json:"reason"`
	// Filtered is true when Filter keeps it from clients.
	Filtered bool `json:"filtered,omitzero"`
}

// buildContent assigns the resources, templates and prompts of ms (in
// order) to the snapshot: like tools, the first to claim a URI, a URI
// template or a client name keeps it, and a later one is reported and not
// served; claims are made before filtering. A prompt that embeds a
// resource clients cannot read is not served either.
func (s *Snapshot) buildContent(ru rules, ms []*manifest.Manifest, base *Snapshot) {
	s.byURI, s.byTemplate, s.byPrompt = map[string]*ResourceEntry{}, map[string]*TemplateEntry{}, map[string]*PromptEntry{}
	claimedURI := map[string]*ResourceEntry{}
	claimedTemplate := map[string]*TemplateEntry{}
	var resources []protocol.Resource
	var templates []protocol.ResourceTemplate
	for _, m := range ms {
		for _, r := range m.Resources {
			add := func(reason string, filtered bool) {
				s.notServed(UnservedContent{"resource", r.URI, r.URI, m.File, r.Path(), reason, filtered})
			}
			e := &ResourceEntry{File: m.File, Resource: r, Manifest: m}
			switch prev, dup := claimedURI[r.URI]; {
			case r.Broken:
				add(hasErrors, false)
			case dup:
				s.conflict(manifest.Problem{File: m.File, Path: r.Path() + ".uri", Resource: r.URI}, "resource URI %q is already used by %s; not served", r.URI, prev.origin())
				add("URI already used by "+prev.origin(), false)
			default:
				claimedURI[r.URI] = e
				if reason := ru.contentReason(m, r.Method, r.URI, r.Name); reason != "" {
					add(reason, true)
					continue
				}
				s.byURI[r.URI] = e
				s.Resources = append(s.Resources, e)
				resources = append(resources, protocol.Resource{URI: r.URI, Name: r.Name, Title: r.Title,
					Description: r.Description, MIMEType: r.MIMEType, Annotations: contentAnnotations(r.Annotations)})
			}
		}
		for _, t := range m.ResourceTemplates {
			add := func(reason string, filtered bool) {
				s.notServed(UnservedContent{"resourceTemplate", t.URITemplate, t.URITemplate, m.File, t.Path(), reason, filtered})
			}
			e := &TemplateEntry{File: m.File, Template: t, Manifest: m,
				schema: sync.OnceValues(func() (*manifest.Schema, error) { return manifest.CompileTemplateSchema(t) })}
			if be := base.template(t.URITemplate); be != nil && be.Template == t {
				e.schema = be.schema // compiled once, whoever reads first
			}
			switch prev, dup := claimedTemplate[t.URITemplate]; {
			case t.Broken:
				add(hasErrors, false)
			case dup:
				s.conflict(manifest.Problem{File: m.File, Path: t.Path() + ".uriTemplate", Resource: t.URITemplate}, "uriTemplate %q is already used by %s; not served", t.URITemplate, prev.origin())
				add("URI template already used by "+prev.origin(), false)
			default:
				claimedTemplate[t.URITemplate] = e
				if reason := ru.contentReason(m, t.Method, t.URITemplate, t.Name); reason != "" {
					add(reason, true)
					continue
				}
				e.Complete = ru.completions(m, t.Complete)
				s.byTemplate[t.URITemplate] = e
				s.Templates = append(s.Templates, e)
				templates = append(templates, protocol.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title,
					Description: t.Description, MIMEType: t.MIMEType, Annotations: contentAnnotations(t.Annotations)})
			}
		}
	}
	s.resources = protocol.NewResourceSet(resources, templates)
	s.buildPrompts(ru, ms, claimedURI, claimedTemplate)
}

// template returns the template s serves as uriTemplate; nil when it
// serves none, or s is nil.
func (s *Snapshot) template(uriTemplate string) *TemplateEntry {
	if s == nil {
		return nil
	}
	return s.byTemplate[uriTemplate]
}

// buildPrompts is buildContent's part for prompts; claimed* are the
// resources and templates that were not in conflict, served or filtered.
func (s *Snapshot) buildPrompts(ru rules, ms []*manifest.Manifest,
	claimedURI map[string]*ResourceEntry, claimedTemplate map[string]*TemplateEntry) {
	claimed := map[string]*PromptEntry{}
	var prompts []protocol.Prompt
	for _, m := range ms {
		for _, p := range m.Prompts {
			name, changed := ClientName(ru.prefix, p.Name)
			add := func(reason string, filtered bool) {
				s.notServed(UnservedContent{"prompt", name, p.Name, m.File, p.Path(), reason, filtered})
			}
			prev, dup := claimed[name]
			switch {
			case p.Broken:
				add(hasErrors, false)
				continue
			case dup:
				s.conflict(manifest.Problem{File: m.File, Path: p.Path() + ".name", Prompt: p.Name}, "client name %q is already used by %s (prompt %q); not served", name, prev.origin(), prev.Prompt.Name)
				add(fmt.Sprintf("client name already used by %s (prompt %q)", prev.origin(), prev.Prompt.Name), false)
				continue
			}
			e := &PromptEntry{Name: name, File: m.File, Prompt: p, Manifest: m}
			claimed[name] = e
			if changed {
				s.renames = append(s.renames, manifest.Problem{File: m.File, Path: p.Path() + ".name", Prompt: p.Name, Severity: manifest.Warning,
					Message: fmt.Sprintf("clients see this prompt as %q (names must match ^[a-zA-Z0-9_-]{1,64}$)", name)})
			}
			if uri, known := s.embedsUnserved(p, claimedURI, claimedTemplate); uri != "" {
				if !known {
					s.conflict(manifest.Problem{File: m.File, Path: p.Path() + ".messages", Prompt: p.Name}, "embeds %s, which no resource or template of the manifests serves; not served", uri)
				}
				add(fmt.Sprintf("embeds %s, which clients cannot read", uri), known)
				continue
			}
			if reason := ru.named(name, p.Name); reason != "" {
				add(reason, true)
				continue
			}
			e.Complete = ru.completions(m, p.Complete)
			s.byPrompt[name] = e
			s.Prompts = append(s.Prompts, e)
			prompts = append(prompts, protocolPrompt(name, p))
		}
	}
	s.prompts = protocol.NewPromptSet(prompts)
}

// notServed records content the snapshot does not serve, and why.
func (s *Snapshot) notServed(u UnservedContent) { s.UnservedContent = append(s.UnservedContent, u) }

// conflict records an error of the manifests as a whole (two claims of
// one name, an embedded resource nothing serves) about the item p names.
func (s *Snapshot) conflict(p manifest.Problem, format string, args ...any) {
	p.Severity, p.Message = manifest.Error, fmt.Sprintf(format, args...)
	s.naming = append(s.naming, p)
}

// embedsUnserved returns the first resource URI a prompt embeds that no
// served resource or template answers, "" when there is none, and
// whether one of the manifests declares it all the same (a filter keeps
// it from clients). A URI that an argument gives whole is checked when
// the prompt is fetched; other placeholders are tried as "x", which any
// template variable matches.
func (s *Snapshot) embedsUnserved(p *manifest.Prompt, claimedURI map[string]*ResourceEntry, claimedTemplate map[string]*TemplateEntry) (uri string, known bool) {
	sample := map[string]string{}
	for _, a := range p.Arguments {
		sample[a.Name] = "x"
	}
	for _, msg := range p.Messages {
		if msg.Resource == "" || strings.HasPrefix(msg.Resource, "{") {
			continue
		}
		u := p.Fill(msg.Resource, sample)
		if s.byURI[u] != nil || slices.ContainsFunc(s.Templates, func(e *TemplateEntry) bool { _, ok := e.Template.Template.Match(u); return ok }) {
			continue
		}
		known = claimedURI[u] != nil || slices.ContainsFunc(slices.Collect(maps.Values(claimedTemplate)), func(e *TemplateEntry) bool {
			_, ok := e.Template.Template.Match(u)
			return ok
		})
		return msg.Resource, known
	}
	return "", false
}

func protocolPrompt(name string, p *manifest.Prompt) protocol.Prompt {
	out := protocol.Prompt{Name: name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		out.Arguments = append(out.Arguments, protocol.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
	}
	return out
}

// contentAnnotations returns a resource's hints as clients see them; nil
// when the manifest gives none.
func contentAnnotations(a *manifest.ContentAnnotations) *protocol.Annotations {
	if a == nil || len(a.Audience) == 0 && a.Priority == nil {
		return nil
	}
	return &protocol.Annotations{Audience: a.Audience, Priority: a.Priority}
}

// hasErrors is why an item with errors is not served.
const hasErrors = "has errors (see 'tairseach-mcp validate')"

// filtered reports whether a filter keeps the content of kind that
// clients know by name from them ("resource", or "prompt").
func (s *Snapshot) filtered(kind, name string) bool {
	return slices.ContainsFunc(s.UnservedContent, func(u UnservedContent) bool {
		return u.Filtered && u.Kind == kind && u.Name == name
	})
}
