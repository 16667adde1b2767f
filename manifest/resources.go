package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// DefaultMaxBytes is how much of a file resource is read when the
// manifest gives no maxBytes: its last mebibyte.
const DefaultMaxBytes = 1 << 20

// Resource is one entry of a manifest's resources array: a URI and where
// its contents come from, which is exactly one of a backend method
// (called with fixed params), a file, or inline text.
type Resource struct {
	URI         string              `json:"uri"`
	Name        string              `json:"name"`
	Title       string              `json:"title"`
	Description string              `json:"description"`
	MIMEType    string              `json:"mimeType"`
	Annotations *ContentAnnotations `json:"annotations"`

	Method string `json:"method"`
	// Params are compact, nil when the manifest gives none.
	Params jsontext.Value `json:"params"`
	// File is the path as the manifest gives it; see the registry for how
	// it is resolved. MaxBytes bounds how much of it is read (0: the
	// default).
	File     string  `json:"file"`
	MaxBytes int64   `json:"maxBytes"`
	Text     *string `json:"text"`

	// Index is the resource's position in the manifest's resources array.
	Index int `json:"-"`
	// Broken is true when the resource has an error-level problem: it is
	// not served, and its fields may be incomplete (URI is set when the
	// manifest gives one).
	Broken bool `json:"-"`
}

// Path returns the JSON path of the resource in its manifest, e.g. resources[2].
func (r *Resource) Path() string { return fmt.Sprintf("resources[%d]", r.Index) }

// ResourceTemplate is one entry of a manifest's resourceTemplates array:
// every URI that matches the template is read by calling Method with
// Params and each variable as a member of the same name.
type ResourceTemplate struct {
	URITemplate string              `json:"uriTemplate"`
	Name        string              `json:"name"`
	Title       string              `json:"title"`
	Description string              `json:"description"`
	MIMEType    string              `json:"mimeType"`
	Annotations *ContentAnnotations `json:"annotations"`
	Method      string              `json:"method"`
	// Params and Schema are compact, nil when the manifest gives none.
	Params jsontext.Value `json:"params"`
	Schema jsontext.Value `json:"schema"`
	// Complete maps a variable to the backend method that completes it.
	Complete map[string]string `json:"complete"`

	// Template is the parsed URITemplate; nil when Broken.
	Template *URITemplate `json:"-"`
	Index    int          `json:"-"`
	Broken   bool         `json:"-"`
}

// Path returns the JSON path of the template in its manifest, e.g. resourceTemplates[0].
func (t *ResourceTemplate) Path() string { return fmt.Sprintf("resourceTemplates[%d]", t.Index) }

// ContentAnnotations are hints to clients about a resource.
type ContentAnnotations struct {
	Audience []string `json:"audience"`
	Priority *float64 `json:"priority"`
}

// resources decodes and checks the manifest's resources.
func (p *parser) resources(m *Manifest, elems []jsontext.Value, uses *methodUses) {
	seen := map[string]int{}
	for i, raw := range elems {
		r := &Resource{Index: i}
		m.Resources = append(m.Resources, r)
		fail := func(path, format string, args ...any) {
			if !r.Broken {
				r.Broken = true
				if r.URI == "" {
					r.URI = memberOf(raw, "uri")
				}
			}
			p.addItem(Error, joinPath(r.Path(), path), resourceItem(r.URI), format, args...)
		}
		if _, ok := p.element(raw, manifestSchemas().resource, r, fail); !ok {
			continue
		}
		compact(&r.Params)
		sources := slices.DeleteFunc([]string{
			ifSet(r.Method != "", "method"), ifSet(r.File != "", "file"), ifSet(r.Text != nil, "text"),
		}, func(s string) bool { return s == "" })
		switch {
		case len(sources) != 1:
			fail("", "a resource needs exactly one of method, file and text; it has %s", orNone(sources))
		case r.Params != nil && r.Method == "":
			fail("params", "params are sent with a method; this resource has none")
		case r.MaxBytes != 0 && r.File == "":
			fail("maxBytes", "maxBytes bounds a file; this resource has none")
		}
		if err := checkURI(r.URI); err != nil {
			fail("uri", "%v", err)
		}
		if first, dup := seen[r.URI]; dup && !r.Broken {
			fail("uri", "duplicate resource URI %q (first declared at resources[%d]); not served", r.URI, first)
		} else if !dup && !r.Broken {
			seen[r.URI] = i
		}
		if r.Method != "" && !r.Broken {
			uses.check(r.Method, "method", fail)
		}
		if !r.Broken && strings.TrimSpace(r.Description) == "" {
			p.addItem(Warning, r.Path()+".description", resourceItem(r.URI), "empty description: clients show it to people choosing what to attach")
		}
	}
}

// templates decodes and checks the manifest's resource templates.
func (p *parser) templates(m *Manifest, elems []jsontext.Value, uses *methodUses) {
	seen := map[string]int{}
	for i, raw := range elems {
		t := &ResourceTemplate{Index: i}
		m.ResourceTemplates = append(m.ResourceTemplates, t)
		fail := func(path, format string, args ...any) {
			if !t.Broken {
				t.Broken = true
				if t.URITemplate == "" {
					t.URITemplate = memberOf(raw, "uriTemplate")
				}
			}
			p.addItem(Error, joinPath(t.Path(), path), resourceItem(t.URITemplate), format, args...)
		}
		doc, ok := p.element(raw, manifestSchemas().template, t, fail)
		if !ok {
			continue
		}
		compact(&t.Params)
		compact(&t.Schema)
		tpl, err := ParseURITemplate(t.URITemplate)
		if err != nil {
			fail("uriTemplate", "%v", err)
			continue
		}
		t.Template = tpl
		if first, dup := seen[t.URITemplate]; dup {
			fail("uriTemplate", "duplicate uriTemplate %q (first declared at resourceTemplates[%d]); not served", t.URITemplate, first)
			continue
		}
		seen[t.URITemplate] = i
		if fixed := paramNames(t.Params); len(fixed) > 0 {
			for _, v := range tpl.Variables() {
				if slices.Contains(fixed, v) {
					fail("params."+v, "%q is both a fixed param and a variable of the template; which one the backend gets would be a guess", v)
				}
			}
		}
		uses.check(t.Method, "method", fail)
		for _, name := range slices.Sorted(maps.Keys(t.Complete)) {
			if !slices.Contains(tpl.Variables(), name) {
				fail("complete."+name, "%q is not a variable of the template (it has %s)", name, strings.Join(tpl.Variables(), ", "))
				continue
			}
			uses.check(t.Complete[name], "complete."+name, fail)
		}
		if t.Schema != nil {
			fields, _ := doc.(map[string]any)
			err := checkPatterns(fields["schema"]) // as a tool's schemas are checked
			if err == nil {
				_, err = compileSchema(t.Path()+".schema", t.Schema)
			}
			if err != nil {
				fail("schema", "schema does not compile: %v", err)
			}
		}
		if !t.Broken && strings.TrimSpace(t.Description) == "" {
			p.addItem(Warning, t.Path()+".description", resourceItem(t.URITemplate), "empty description: clients show it to people choosing what to attach")
		}
	}
}

// checkURI checks that s is an absolute URI that a client can send back
// as it is: a scheme, and nothing a URI cannot hold.
func checkURI(s string) error {
	if !scheme.MatchString(s) {
		return errors.New("must start with a scheme, as in tairseach://status")
	}
	if strings.ContainsAny(s, "{}") {
		return errors.New(`has "{" or "}": a URI with {variables} belongs in resourceTemplates`)
	}
	return checkLiteral(s)
}

// CompileTemplateSchema compiles the schema of a template's variables,
// nil when the template declares none. For a template Parse found
// servable it does not fail. It is safe for concurrent use.
func CompileTemplateSchema(t *ResourceTemplate) (*Schema, error) {
	if t.Schema == nil {
		return nil, nil
	}
	return compileSchema(t.Path()+".schema", t.Schema)
}

// methodUses checks the backend methods that resources, templates and
// completions call: each must be one of implementation.methods (the list
// of what the manifest lets clients reach), and none may be the method of
// a tool marked destructive, since reading must not change anything.
type methodUses struct {
	allowed     map[string]bool   // implementation.methods' values
	destructive map[string]string // method → a destructive tool that calls it
	used        map[string]bool   // every method checked, allowed or not
}

func newMethodUses(m *Manifest) *methodUses {
	u := &methodUses{allowed: map[string]bool{}, destructive: map[string]string{}, used: map[string]bool{}}
	for _, method := range m.Implementation.Methods {
		u.allowed[method] = true
	}
	for _, t := range m.Tools {
		if !t.Broken && t.Method != "" && t.Annotations != nil && t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint {
			if _, ok := u.destructive[t.Method]; !ok {
				u.destructive[t.Method] = t.Name
			}
		}
	}
	return u
}

// check reports through fail, at path, a method that may not be called.
func (u *methodUses) check(method, path string, fail func(path, format string, args ...any)) {
	u.used[method] = true
	switch tool, destructive := u.destructive[method]; {
	case !u.allowed[method]:
		fail(path, "method %q is not one of implementation.methods; list it there to allow it", method)
	case destructive:
		fail(path, "method %q is the method of tool %q, marked destructiveHint: true; reading must not change anything", method, tool)
	}
}

// paramNames returns the member names of a params object.
func paramNames(params jsontext.Value) []string {
	if params == nil {
		return nil
	}
	v, _, _ := defaultDecoder.decode(params)
	obj, _ := v.(map[string]any)
	return slices.Sorted(maps.Keys(obj))
}

// resourceItem names a resource or template in problems.
func resourceItem(uri string) item { return item{resource: uri} }

func ifSet(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

// orNone joins words with "and", or says "none".
func orNone(words []string) string {
	if len(words) == 0 {
		return "none"
	}
	return strings.Join(words, " and ")
}

// compact removes insignificant white space from a raw value decoded
// strictly, as it is sent on; nil stays nil.
func compact(v *jsontext.Value) {
	if *v != nil {
		_ = v.Compact()
	}
}
