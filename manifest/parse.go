package manifest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxFileSize is the largest manifest file read; larger files are an error.
const MaxFileSize = 8 << 20

// Lint thresholds: beyond these a tool dominates the tool list a model reads.
const (
	maxDescriptionLen = 4 << 10
	maxSchemaLen      = 32 << 10
)

// Parse reads one manifest file's contents. It returns nil when the file
// cannot be served at all (invalid JSON, a repeated name or invalid UTF-8
// outside the tools, wrong types, missing id or tools); otherwise the
// manifest, whose tools with error-level problems are marked Broken.
// Problems lists everything found, errors and warnings, in file order.
// file is used in problems only.
func Parse(file string, data []byte) (*Manifest, []Problem) {
	p := &parser{file: file}
	m := p.parse(data)
	return m, p.problems
}

type parser struct {
	file     string
	problems []Problem
}

func (p *parser) add(sev Severity, path, tool, format string, args ...any) {
	p.addItem(sev, path, item{tool: tool}, format, args...)
}

// item names what a problem is about: a tool, a resource (or template),
// a prompt, or nothing but the file.
type item struct{ tool, resource, prompt string }

func (p *parser) addItem(sev Severity, path string, it item, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Path: path, Tool: it.tool, Resource: it.resource, Prompt: it.prompt,
		Severity: sev, Message: fmt.Sprintf(format, args...)})
}

// lenient checks JSON syntax only, for splitting a manifest; what it lets
// through is then refused in the part where it is.
var lenient = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

func (p *parser) parse(data []byte) *Manifest {
	if len(data) > MaxFileSize {
		p.add(Error, "", "", "file is %d bytes, more than the %d allowed", len(data), MaxFileSize)
		return nil
	}
	s := split{data: data}
	if err := json.Unmarshal(data, &s, lenient); err != nil {
		p.add(Error, "", "", "invalid JSON: %s", syntaxProblem(data, err))
		return nil
	}
	if k := jsontext.Value(data).Kind(); k != '{' {
		p.add(Error, "", "", "a manifest must be a JSON object, not %s", kindName(k))
		return nil
	}

	// The file, its arrays of items left out.
	doc, values, err := defaultDecoder.decode(s.rest)
	if err != nil {
		path, msg := decodeProblem(err)
		p.add(Error, path, "", "%s", msg)
		return nil
	}
	if vs, err := manifestSchemas().file.validate(context.Background(), doc, values); err != nil || len(vs) > 0 {
		for _, v := range checkProblems(vs, err) {
			p.add(Error, v.Path(), "", "%s", v.Message)
		}
		return nil
	}
	m := &Manifest{File: p.file}
	if err := json.Unmarshal(s.rest, m); err != nil {
		// The format check passed, so this is a case the format does not
		// cover; report it rather than guess.
		p.add(Error, "", "", "cannot decode manifest: %v", err)
		return nil
	}

	seen := map[string]int{} // tool name → index of its first declaration
	for i, raw := range s.items["tools"] {
		t, doc := p.tool(i, raw)
		m.Tools = append(m.Tools, t)
		if first, dup := seen[t.Name]; dup && !t.Broken {
			t.Broken = true
			p.add(Error, t.Path()+".name", t.Name, "duplicate tool name %q (first declared at tools[%d]); not served", t.Name, first)
		} else if !dup && t.Name != "" {
			seen[t.Name] = i
		}
		if t.Broken {
			continue
		}
		t.Method = m.Implementation.Methods[t.Name]
		p.lint(t, doc)
		p.compile(t, doc)
		p.headers(t, doc)
	}

	uses := newMethodUses(m)
	p.resources(m, s.items["resources"], uses)
	p.templates(m, s.items["resourceTemplates"], uses)
	p.prompts(m, s.items["prompts"], uses)

	// A method mapping with no tool is probably a typo in one of the
	// names, unless it is there to let a resource, template or
	// completion call its method.
	for _, name := range slices.Sorted(maps.Keys(m.Implementation.Methods)) {
		if _, ok := seen[name]; !ok && !uses.used[m.Implementation.Methods[name]] {
			p.add(Warning, "implementation.methods."+name, "", "method mapping for %q, but no tool has that name and no resource, template or completion calls its method", name)
		}
	}
	return m
}

// tool decodes and checks the tool at index i of the tools array, whose
// JSON is raw, and returns it with its decoded document; a tool with a
// problem comes back Broken.
func (p *parser) tool(i int, raw jsontext.Value) (*Tool, any) {
	t := &Tool{Index: i}
	fail := func(path, format string, args ...any) {
		if !t.Broken {
			t.Broken = true
			t.Name = memberOf(raw, "name")
		}
		p.add(Error, joinPath(t.Path(), path), t.Name, format, args...)
	}
	doc, ok := p.element(raw, manifestSchemas().tool, t, fail)
	if !ok {
		return t, nil
	}
	// Compact, as clients are sent them and the lint counts them.
	compact(&t.InputSchema)
	compact(&t.OutputSchema)
	return t, doc
}

// element decodes one element of the manifest's arrays, whose JSON is
// raw, into v, after checking it against its format. It reports what is
// wrong through fail, at paths relative to the element, and returns the
// element decoded as the schema library sees it, or false.
func (p *parser) element(raw jsontext.Value, format *Schema, v any, fail func(path, format string, args ...any)) (any, bool) {
	doc, values, err := defaultDecoder.decode(raw)
	if err != nil {
		path, msg := decodeProblem(err)
		fail(path, "%s", msg)
		return nil, false
	}
	if vs, err := format.validate(context.Background(), doc, values); err != nil || len(vs) > 0 {
		for _, v := range checkProblems(vs, err) {
			fail(v.Path(), "%s", explainViolation(v))
		}
		return nil, false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		fail("", "cannot decode it: %v", err) // see "cannot decode manifest"
		return nil, false
	}
	return doc, true
}

// checkProblems returns the violations of a check against the manifest
// format, or the check's error as one violation at the root.
func checkProblems(vs []Violation, err error) []Violation {
	if err != nil {
		return []Violation{{Message: "cannot be checked: it " + err.Error()}}
	}
	return vs
}

// memberOf returns the string member name of an element that is broken,
// "" when it has none.
func memberOf(raw jsontext.Value, name string) string {
	var members map[string]jsontext.Value
	_ = json.Unmarshal(raw, &members, lenient)
	var s string
	_ = json.Unmarshal(members[name], &s, lenient)
	return s
}

// lint adds warnings about a tool that is served but could be better; doc
// is the tool decoded.
func (p *parser) lint(t *Tool, doc any) {
	if !t.Exposed() {
		return
	}
	if t.Method == "" {
		p.add(Warning, t.Path(), t.Name, "no method mapping in implementation.methods; not served")
	}
	if strings.TrimSpace(t.Description) == "" {
		p.add(Warning, t.Path()+".description", t.Name, "empty description: models choose tools by their descriptions")
	}
	if len(t.Description) > maxDescriptionLen {
		p.add(Warning, t.Path()+".description", t.Name, "description is %d bytes; over %d it dominates the tool list a model reads", len(t.Description), maxDescriptionLen)
	}
	if n := len(t.InputSchema) + len(t.OutputSchema); n > maxSchemaLen {
		p.add(Warning, t.Path(), t.Name, "schemas are %d bytes; over %d they dominate the tool list a model reads", n, maxSchemaLen)
	}
	top, _ := doc.(map[string]any)["inputSchema"].(map[string]any)
	props, _ := top["properties"].(map[string]any)
	for _, name := range t.Confirm.Placeholders() {
		if _, ok := props[name]; !ok {
			p.add(Warning, t.Path()+".confirm", t.Name, "the confirmation's {%s} names no argument of the inputSchema's properties; it is shown as (not given)", name)
		}
	}
	if t.Execution != nil && t.Execution.TaskSupport == "required" {
		p.add(Warning, t.Path()+".execution.taskSupport", t.Name, "taskSupport required: clients that cannot take a task (before 2025-11-25, or 2026-07-28 without the tasks extension) cannot call it; optional serves them too")
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := top[kw]; ok {
			p.add(Warning, t.Path()+".inputSchema."+kw, t.Name, "top-level %s in inputSchema is rejected by some model APIs; move it into a property", kw)
		}
	}
}

// compile checks that the tool's schemas compile, with no pattern too
// long to compile, marking it broken when one does not; doc is the tool
// decoded. The compiled schemas are dropped: whoever serves the tool
// compiles them when it needs them (see CompileSchemas).
func (p *parser) compile(t *Tool, doc any) {
	fields, _ := doc.(map[string]any)
	for _, s := range []struct {
		field  string
		schema jsontext.Value
	}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}} {
		if s.schema == nil {
			continue
		}
		path := t.Path() + "." + s.field
		err := checkPatterns(fields[s.field])
		if err == nil {
			_, err = compileSchema(path, s.schema)
		}
		if err != nil {
			t.Broken = true
			p.add(Error, path, t.Name, "schema does not compile: %v", err)
		}
	}
}

// itemArrays are the top-level arrays whose elements are checked one by
// one, so that a problem in one element keeps only it from being served.
var itemArrays = []string{"tools", "resources", "resourceTemplates", "prompts"}

// split is a manifest cut in two: the elements of its itemArrays, and
// the rest, the file with those arrays emptied. Unmarshaled with lenient,
// it checks the syntax of the whole file.
type split struct {
	data  []byte                      // the file
	rest  []byte                      // the file without the arrays' elements
	items map[string][]jsontext.Value // by array name, the elements, parts of data
}

// UnmarshalJSONFrom finds the item arrays in the top-level object; a
// second member of the same name is left in the rest, for the strict
// decode there to refuse.
func (s *split) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	s.items = map[string][]jsontext.Value{}
	if dec.PeekKind() != '{' {
		s.rest = s.data
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	found := map[string]bool{}
	kept := int64(0) // s.data[kept:] is not in s.rest yet
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		n := name.String()
		if found[n] || !slices.Contains(itemArrays, n) || dec.PeekKind() != '[' {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		found[n] = true
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		start := dec.InputOffset()
		elems := []jsontext.Value{}
		for dec.PeekKind() != ']' {
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			end := dec.InputOffset()
			elems = append(elems, jsontext.Value(s.data[end-int64(len(v)):end]))
		}
		s.items[n] = elems
		s.rest = append(s.rest, s.data[kept:start]...)
		kept = dec.InputOffset()
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	s.rest = append(s.rest, s.data[kept:]...)
	return nil
}

// kindName names a JSON kind for messages.
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
	case 'n':
		return "null"
	}
	return "an object"
}

// explainViolation rewrites the format check's terse messages about a
// tool where a manifest author needs to know the rule, not just the
// symptom.
func explainViolation(v Violation) string {
	for _, field := range []string{"/inputSchema", "/outputSchema", "/schema"} {
		switch {
		case v.Pointer == field && v.Keyword == "required", v.Pointer == field+"/type":
			return v.Message + `: the schema's root must have "type": "object"`
		case v.Pointer == field && v.Keyword == "type":
			return v.Message + `: the schema must be a JSON object with "type": "object"`
		}
	}
	return v.Message
}
