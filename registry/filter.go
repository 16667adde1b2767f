package registry

import (
	"fmt"
	"path"
	"slices"

	"github.com/tairseach/tairseach-mcp/manifest"
)

// Filter decides which tools, resources, resource templates and prompts
// clients see and may use. The zero value serves everything.
//
// Patterns are globs with path.Match's syntax (* matches any run of
// characters but /, ? one character, [a-z] a class; case matters) matched
// against the whole client name (tairseach_mail_*) or the whole manifest
// name (mail.*) of a tool or prompt, and the whole URI (or URI template)
// or the name of a resource. An item is served when no Exclude pattern
// matches it, Include is empty or one of its patterns matches it, and,
// with ReadOnly: for a tool, its annotations say readOnlyHint: true; for
// a resource or template that calls a backend method, a tool of its
// manifest with that method says so (files, inline text and prompts
// change nothing). Under ReadOnly a completion whose method no such tool
// has is not offered.
type Filter struct {
	Include, Exclude []string
	ReadOnly         bool
}

// Check returns an error naming the first malformed pattern.
func (f Filter) Check() error {
	for _, p := range slices.Concat(f.Include, f.Exclude) {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("bad pattern %q: %w", p, err)
		}
	}
	return nil
}

// reason returns why the filter keeps the tool from clients, or "".
func (f Filter) reason(client string, t *manifest.Tool) string {
	if reason := f.named(client, t.Name); reason != "" {
		return reason
	}
	if f.ReadOnly && !readOnly(t) {
		return "filtered out as not read-only: its annotations do not say readOnlyHint: true"
	}
	return ""
}

// named returns why the patterns keep an item known by names from
// clients, or "".
func (f Filter) named(names ...string) string {
	if p, ok := matchAny(f.Exclude, names...); ok {
		return fmt.Sprintf("filtered out by the exclude pattern %q", p)
	}
	if _, ok := matchAny(f.Include, names...); len(f.Include) > 0 && !ok {
		return "filtered out: matched by no include pattern"
	}
	return ""
}

// contentReason returns why the filter keeps a resource or template of m
// from clients, or "": method is the backend method it calls ("" for
// none), names are its URI (or URI template) and its name.
func (f Filter) contentReason(m *manifest.Manifest, method string, names ...string) string {
	if reason := f.named(names...); reason != "" {
		return reason
	}
	if f.ReadOnly && method != "" && !readOnlyMethod(m, method) {
		return fmt.Sprintf("filtered out as not read-only: no tool of its manifest with method %q says readOnlyHint: true", method)
	}
	return ""
}

// completions returns the completion methods of m's complete map that
// the filter lets clients call; nil when none.
func (f Filter) completions(m *manifest.Manifest, complete map[string]string) map[string]string {
	var out map[string]string
	for arg, method := range complete {
		if f.ReadOnly && !readOnlyMethod(m, method) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[arg] = method
	}
	return out
}

// readOnly reports whether a tool's annotations say readOnlyHint: true.
func readOnly(t *manifest.Tool) bool {
	return t.Annotations != nil && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// readOnlyMethod reports whether a tool of m that calls method says
// readOnlyHint: true.
func readOnlyMethod(m *manifest.Manifest, method string) bool {
	return slices.ContainsFunc(m.Tools, func(t *manifest.Tool) bool { return t.Method == method && readOnly(t) })
}

func matchAny(patterns []string, names ...string) (string, bool) {
	for _, p := range patterns {
		for _, n := range names {
			if ok, _ := path.Match(p, n); ok {
				return p, true
			}
		}
	}
	return "", false
}

// Unserved is a tool of a loaded manifest that clients do not see.
type Unserved struct {
	// Name is the client name the tool would have.
	Name string `json:"name"`
	// Tool is the manifest's name for it, File the manifest file and
	// Path the tool's place in it (tools[2]).
	Tool string `json:"tool"`
	File string `json:"file"`
	Path string `json:"path"`
	// Reason says why, in words for a person.
	Reason string `json:"reason"`
	// Folded is true when the tool is served, once, as an earlier tool of
	// the same client name and backend method: not a problem.
	Folded bool `json:"folded,omitzero"`
	// Filtered is true when Filter keeps the tool from clients.
	Filtered bool `json:"filtered,omitzero"`
}

// unservable says why a manifest tool cannot be served at all, or "".
func unservable(t *manifest.Tool) string {
	switch {
	case t.Servable():
		return ""
	case t.Broken:
		return "has errors (see 'tairseach-mcp validate')"
	case !t.Exposed():
		return "hidden by mcpExpose: false"
	}
	return "no method mapping in implementation.methods"
}
