package manifest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
)

// SchemaJSON is the manifest format as a JSON Schema (draft 2020-12), the
// same document the loader checks every file against. Editors can use it
// through the file manifest/manifest.schema.json.
//
//go:embed manifest.schema.json
var SchemaJSON []byte

// MaxFileSize is the largest manifest file read; larger files are an error.
const MaxFileSize = 8 << 20

// Lint thresholds: beyond these a tool dominates the tool list a model reads.
const (
	maxDescriptionLen = 4 << 10
	maxSchemaLen      = 32 << 10
)

const metaSchemaURL = "https://github.com/tairseach/tairseach-mcp/manifest/manifest.schema.json"

// metaSchema compiles the embedded format schema once per process.
var metaSchema = sync.OnceValue(func() *jsonschema.Schema {
	c := newCompiler()
	if err := c.AddResource(metaSchemaURL, bytes.NewReader(SchemaJSON)); err != nil {
		panic("manifest: embedded schema: " + err.Error())
	}
	return c.MustCompile(metaSchemaURL)
})

// newCompiler returns a draft 2020-12 compiler that never loads anything:
// a manifest cannot make the bridge open a connection or read a file.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("loading %s is disabled: schemas must be self-contained", s)
	}
	return c
}

// rawManifest names the members of a manifest (see checkCase).
type rawManifest struct {
	Manifest
	Tools []json.RawMessage `json:"tools"`
}

// Parse reads one manifest file's contents. It returns nil when the file
// cannot be served at all (invalid JSON, wrong top-level types, missing
// id or tools); otherwise the manifest, whose tools with error-level
// problems are marked Broken. Problems lists everything found, errors and
// warnings, in file order. file is used in problems and schema locations only.
func Parse(file string, data []byte) (*Manifest, []Problem) {
	p := &parser{file: file}
	m := p.parse(data)
	return m, p.problems
}

type parser struct {
	file     string
	problems []Problem
	docTools []any // the tools array, decoded with json.Number
}

func (p *parser) add(sev Severity, path, tool, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Path: path, Tool: tool, Severity: sev, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) parse(data []byte) *Manifest {
	if len(data) > MaxFileSize {
		p.add(Error, "", "", "file is %d bytes, more than the %d allowed", len(data), MaxFileSize)
		return nil
	}
	doc, err := decodeValue(data)
	if err != nil {
		p.add(Error, "", "", "invalid JSON: %s", describeJSONError(data, err))
		return nil
	}
	if _, ok := doc.(map[string]any); !ok {
		p.add(Error, "", "", "a manifest must be a JSON object, not %s", jsonKind(doc))
		return nil
	}

	// Check the format. Problems inside one tool break that tool only.
	brokenTools := map[int]bool{}
	fileBroken := false
	var formatErr error
	if !surelyWellFormed(doc) { // the library finds and words what is wrong
		formatErr = Validate(metaSchema(), doc)
	}
	if formatErr != nil {
		for _, v := range Violations(formatErr) {
			if idx, inTool := splitToolPointer(v.Pointer); inTool {
				brokenTools[idx] = true
				p.add(Error, pointerToPath(v.Pointer), toolName(doc, idx), "%s", explainToolViolation(v))
				continue
			}
			fileBroken = true
			p.add(Error, pointerToPath(v.Pointer), "", "%s", v.Message)
		}
	}
	p.checkCase(doc, brokenTools, &fileBroken)
	if fileBroken {
		return nil
	}

	top := doc.(map[string]any)
	m, rawTools, err := decodeManifest(data, top)
	if rep := (*repeatedName)(nil); errors.As(err, &rep) {
		p.add(Error, rep.path, "", "%s", rep)
		return nil
	}
	if err != nil {
		// The format check passed, so this is a case the schema does not
		// cover; report it rather than guess.
		p.add(Error, "", "", "cannot decode manifest: %v", err)
		return nil
	}
	m.File = p.file
	p.docTools, _ = top["tools"].([]any)
	m.Tools = make([]*Tool, 0, len(rawTools))

	seen := map[string]int{}
	for i, rt := range rawTools {
		t := &Tool{Index: i}
		if brokenTools[i] {
			t.Broken = true
			t.Name = toolName(doc, i)
			if _, dup := seen[t.Name]; !dup && t.Name != "" {
				seen[t.Name] = i
			}
			m.Tools = append(m.Tools, t)
			continue
		}
		if err := decodeTool(rt, p.docTools[i], t); err != nil {
			t.Broken = true
			t.Name = toolName(doc, i)
			if _, dup := seen[t.Name]; !dup && t.Name != "" {
				seen[t.Name] = i
			}
			if rep := (*repeatedName)(nil); errors.As(err, &rep) {
				p.add(Error, joinPath(t.Path(), rep.path), t.Name, "%s", rep)
			} else {
				p.add(Error, t.Path(), t.Name, "cannot decode tool: %v", err)
			}
			m.Tools = append(m.Tools, t)
			continue
		}
		t.Index = i
		t.Method = m.Implementation.Methods[t.Name]
		if first, dup := seen[t.Name]; dup {
			t.Broken = true
			p.add(Error, t.Path()+".name", t.Name, "duplicate tool name %q (first declared at tools[%d]); not served", t.Name, first)
		} else {
			seen[t.Name] = i
		}
		p.lintTool(t)
		if !t.Broken {
			p.compileTool(t)
		}
		m.Tools = append(m.Tools, t)
	}

	// A method mapping with no tool is probably a typo in one of the names.
	for _, name := range slices.Sorted(maps.Keys(m.Implementation.Methods)) {
		if _, ok := seen[name]; !ok {
			p.add(Warning, "implementation.methods."+name, "", "method mapping for %q, but no tool has that name", name)
		}
	}
	return &m
}

// lintTool adds warnings about a tool that is served but could be better.
func (p *parser) lintTool(t *Tool) {
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
	if top, ok := p.docTool(t)["inputSchema"].(map[string]any); ok {
		for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
			if _, ok := top[kw]; ok {
				p.add(Warning, t.Path()+".inputSchema."+kw, t.Name, "top-level %s in inputSchema is rejected by some model APIs; move it into a property", kw)
			}
		}
	}
}

// compileTool checks that the tool's schemas compile, marking it broken
// when one does not. The compiled schemas are dropped (see Tool.Schemas).
func (p *parser) compileTool(t *Tool) {
	t.file = p.file
	t.Trivial = isTrivialObjectSchema(p.docTool(t)["inputSchema"])
	if p.surelyCompiles(t) {
		return
	}
	if _, _, err := compileTool(p.file, t); err != nil {
		t.Broken = true
		var se *schemaError
		if errors.As(err, &se) {
			p.add(Error, t.Path()+"."+se.field, t.Name, "schema does not compile: %v", se.err)
		} else {
			p.add(Error, t.Path(), t.Name, "schema does not compile: %v", err)
		}
	}
}

// encoding/json matches object keys to struct fields ignoring case, so
// {"inputSchema":…,"InputSchema":…} would be checked as one schema and
// served as the other. A key that differs from a field's name only in
// case is an error instead.
var (
	manifestKeys   = jsonNames(reflect.TypeFor[rawManifest]())
	implKeys       = jsonNames(reflect.TypeFor[Implementation]())
	toolKeys       = jsonNames(reflect.TypeFor[Tool]())
	annotationKeys = jsonNames(reflect.TypeFor[Annotations]())
)

// jsonNames lists the JSON names of a struct type's fields, those of
// embedded structs included.
func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "":
			names = append(names, jsonNames(f.Type)...)
		case name != "":
			names = append(names, name)
		}
	}
	return names
}

// checkCase reports keys that differ from a field name only in case:
// in a tool (or its annotations) they break the tool, elsewhere the file.
func (p *parser) checkCase(doc any, brokenTools map[int]bool, fileBroken *bool) {
	// path is made only for a report: the tools' paths would be a
	// formatted string per tool, each time a manifest loads.
	check := func(obj any, names []string, path func() string, report func(path, msg string)) {
		m, _ := obj.(map[string]any)
		type mismatch struct{ key, name string }
		var bad []mismatch // rare, so sorted only when found
		for k := range m {
			for _, n := range names {
				if k != n && strings.EqualFold(k, n) {
					bad = append(bad, mismatch{k, n})
				}
			}
		}
		slices.SortFunc(bad, func(a, b mismatch) int { return strings.Compare(a.key, b.key) })
		for _, b := range bad {
			report(joinPath(path(), b.key), fmt.Sprintf("%q differs from %q only in case; names are case-sensitive", b.key, b.name))
		}
	}
	fileLevel := func(path, msg string) {
		*fileBroken = true
		p.add(Error, path, "", "%s", msg)
	}
	check(doc, manifestKeys, func() string { return "" }, fileLevel)
	m, _ := doc.(map[string]any)
	check(m["implementation"], implKeys, func() string { return "implementation" }, fileLevel)
	tools, _ := m["tools"].([]any)
	for i, t := range tools {
		toolLevel := func(path, msg string) {
			brokenTools[i] = true
			p.add(Error, path, toolName(doc, i), "%s", msg)
		}
		path := func() string { return fmt.Sprintf("tools[%d]", i) }
		check(t, toolKeys, path, toolLevel)
		tm, _ := t.(map[string]any)
		check(tm["annotations"], annotationKeys, func() string { return path() + ".annotations" }, toolLevel)
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// docTool returns the tool's object in the decoded document, nil when
// there is none.
func (p *parser) docTool(t *Tool) map[string]any {
	if t.Index >= len(p.docTools) {
		return nil
	}
	dt, _ := p.docTools[t.Index].(map[string]any)
	return dt
}

// surelyCompiles reports whether the tool's schemas certainly compile
// (see surelyCompiles in quickcheck.go), so that compiling them can wait
// for the tool's first call.
func (p *parser) surelyCompiles(t *Tool) bool {
	dt := p.docTool(t)
	if dt == nil {
		return false
	}
	out, hasOut := dt["outputSchema"]
	return surelyCompiles(dt["inputSchema"]) && (!hasOut || surelyCompiles(out))
}

// schemaError names which of a tool's schemas failed to compile.
type schemaError struct {
	field string // inputSchema or outputSchema
	err   error
}

func (e *schemaError) Error() string { return e.field + ": " + e.err.Error() }

func compileTool(file string, t *Tool) (in, out *jsonschema.Schema, err error) {
	in, err = CompileSchema(file, t.Path()+".inputSchema", t.InputSchema)
	if err != nil {
		return nil, nil, &schemaError{"inputSchema", err}
	}
	if len(t.OutputSchema) > 0 {
		out, err = CompileSchema(file, t.Path()+".outputSchema", t.OutputSchema)
		if err != nil {
			return nil, nil, &schemaError{"outputSchema", err}
		}
	}
	return in, out, nil
}

// CompileSchema compiles one JSON Schema document (draft 2020-12 unless
// its $schema says otherwise). References may only point inside the
// document: nothing is loaded from the network or the file system. file
// and path only name the schema in errors.
func CompileSchema(file, path string, schema []byte) (s *jsonschema.Schema, err error) {
	defer func() {
		// The library panics on numbers its big.Rat parser refuses (an
		// exponent past a million): one manifest must not stop the load.
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("the schema library failed on it (%v); a number may be out of range", p)
		}
	}()
	c := newCompiler()
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String() + "." + path + ".json"
	if err := c.AddResource(u, bytes.NewReader(schema)); err != nil {
		return nil, cleanSchemaError(err, u)
	}
	if s, err = c.Compile(u); err != nil {
		return nil, cleanSchemaError(err, u)
	}
	return s, nil
}

// cleanSchemaError drops the library's prefixes and the synthetic URL so
// the message reads well after file:path.
func cleanSchemaError(err error, u string) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		var parts []string
		for _, v := range Violations(ve) {
			loc := pointerToPath(v.Pointer)
			if loc == "" {
				parts = append(parts, v.Message)
			} else {
				parts = append(parts, loc+": "+v.Message)
			}
		}
		return errors.New(strings.Join(parts, "; "))
	}
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "jsonschema "+u+" compilation failed: ", "")
	msg = strings.ReplaceAll(msg, "jsonschema: ", "")
	msg = strings.ReplaceAll(msg, u, "schema")
	return errors.New(msg)
}

// isTrivialObjectSchema reports whether a schema (decoded) accepts every
// object, so arguments need no validation beyond being an object.
func isTrivialObjectSchema(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch k {
		case "type", "$schema", "title", "description", "$comment", "examples":
		case "properties":
			if p, ok := v.(map[string]any); !ok || len(p) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Violation is one reason a value failed a schema.
type Violation struct {
	// Pointer is the JSON pointer of the failing value ("" = the root).
	Pointer string
	// Message says why, e.g. "expected string, but got number".
	Message string
}

// Path returns the failing value's location as a JSON path: "" for the
// root, else e.g. "items[2].name".
func (v Violation) Path() string { return pointerToPath(v.Pointer) }

// Violations flattens a validation error into its leaf causes, the ones
// that say what is actually wrong. Any other error becomes one violation
// at the root.
func Violations(err error) []Violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Pointer: e.InstanceLocation, Message: e.Message})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// Validate checks a decoded value against a compiled schema, like
// s.Validate, but turns the library's panics (it has some on numbers
// whose exponent is past a million) into an error.
func Validate(s *jsonschema.Schema, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot be checked: %v (a number may be out of range)", p)
		}
	}()
	return s.Validate(v)
}

// decodeValue decodes JSON the way the schema library expects (numbers
// as json.Number), rejecting trailing data.
func decodeValue(data []byte) (any, error) {
	if v, err := jsonscan.Decode(data); err == nil {
		return v, nil // the same value, in a quarter of the time
	}
	// encoding/json words the error (and allows deeper nesting).
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, &json.SyntaxError{Offset: d.InputOffset()}
	}
	return v, nil
}

// describeJSONError adds a line and column to JSON syntax errors.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		msg := se.Error()
		if msg == "" {
			msg = "unexpected data after the top-level value"
		}
		return fmt.Sprintf("line %d, column %d: %s", line, col, msg)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the file is empty or ends too early"
	}
	return err.Error()
}

func lineCol(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "an object"
}

// explainToolViolation rewrites the format check's terse messages where
// a manifest author needs to know the rule, not just the symptom.
func explainToolViolation(v Violation) string {
	for _, field := range []string{"/inputSchema", "/outputSchema"} {
		if strings.HasSuffix(v.Pointer, field) && strings.Contains(v.Message, "'type'") ||
			strings.HasSuffix(v.Pointer, field+"/type") {
			return v.Message + `: the schema's root must have "type": "object"`
		}
		if strings.HasSuffix(v.Pointer, field) && strings.Contains(v.Message, "expected object") {
			return v.Message + `: the schema must be a JSON object with "type": "object"`
		}
	}
	return v.Message
}

// splitToolPointer recognises pointers into one tool: /tools/<i>[/...].
func splitToolPointer(ptr string) (idx int, ok bool) {
	s, found := strings.CutPrefix(ptr, "/tools/")
	if !found {
		return 0, false
	}
	num, _, _ := strings.Cut(s, "/")
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}

// toolName returns tools[i].name from a decoded document, "" if absent.
func toolName(doc any, i int) string {
	m, _ := doc.(map[string]any)
	tools, _ := m["tools"].([]any)
	if i >= len(tools) {
		return ""
	}
	t, _ := tools[i].(map[string]any)
	name, _ := t["name"].(string)
	return name
}
