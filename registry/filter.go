package registry

import (
	"fmt"
	"path"
	"slices"

	"github.com/tairseach/tairseach-mcp/manifest"
)

// Filter decides which tools clients see and may call. The zero value
// serves every tool.
//
// Patterns are globs with path.Match's syntax (* matches any run of
// characters, ? one character, [a-z] a class; case matters) matched
// against the whole client name (tairseach_mail_*) or the whole manifest
// tool name (mail.*). A tool is served when no Exclude pattern matches it,
// Include is empty or one of its patterns matches it, and, with ReadOnly,
// its annotations say readOnlyHint: true.
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
	if p, ok := matchAny(f.Exclude, client, t.Name); ok {
		return fmt.Sprintf("filtered out by the exclude pattern %q", p)
	}
	if _, ok := matchAny(f.Include, client, t.Name); len(f.Include) > 0 && !ok {
		return "filtered out: matched by no include pattern"
	}
	if f.ReadOnly && (t.Annotations == nil || t.Annotations.ReadOnlyHint == nil || !*t.Annotations.ReadOnlyHint) {
		return "filtered out as not read-only: its annotations do not say readOnlyHint: true"
	}
	return ""
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
