package manifest

import (
	"bytes"
	_ "embed"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// SchemaJSON is the manifest format as a JSON Schema (draft 2020-12), the
// same document the loader checks every file against. Editors can use it
// through the file manifest/manifest.schema.json.
//
//go:embed manifest.schema.json
var SchemaJSON []byte

const metaSchemaURL = "https://github.com/tairseach/tairseach-mcp/manifest/manifest.schema.json"

// format is the embedded manifest format, compiled: the whole file, and
// each kind of element of its arrays, which Parse checks one by one so
// that a problem in one element keeps only it from being served.
type format struct {
	file, tool, resource, template, prompt *Schema
}

// manifestSchemas compiles the embedded format once per process.
var manifestSchemas = sync.OnceValue(func() format {
	compile := func(url string) *Schema {
		s, err := newSchema(func(c *jsonschema.Compiler) (*jsonschema.Schema, error) {
			if err := c.AddResource(metaSchemaURL, bytes.NewReader(SchemaJSON)); err != nil {
				return nil, err
			}
			return c.Compile(url)
		})
		if err != nil {
			panic("manifest: embedded schema: " + err.Error())
		}
		return s
	}
	def := func(name string) *Schema { return compile(metaSchemaURL + "#/$defs/" + name) }
	return format{
		file: compile(metaSchemaURL), tool: def("tool"),
		resource: def("resource"), template: def("resourceTemplate"), prompt: def("prompt"),
	}
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

// CompileSchemas compiles the tool's input schema and its output schema
// (nil when the tool declares none), each draft 2020-12 unless its
// $schema says otherwise. References may only point inside the schema:
// nothing is loaded from the network or the file system. For a tool
// Parse found servable it does not fail. It is safe for concurrent use.
func CompileSchemas(t *Tool) (in, out *Schema, err error) {
	in, err = compileSchema(t.Path()+".inputSchema", t.InputSchema)
	if err != nil {
		return nil, nil, fmt.Errorf("inputSchema: %w", err)
	}
	if len(t.OutputSchema) > 0 {
		out, err = compileSchema(t.Path()+".outputSchema", t.OutputSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("outputSchema: %w", err)
		}
	}
	return in, out, nil
}

// compileSchema compiles one schema; path names it in the manifest.
func compileSchema(path string, schema []byte) (*Schema, error) {
	u := "file:///" + path + ".json"
	return newSchema(func(c *jsonschema.Compiler) (s *jsonschema.Schema, err error) {
		defer func() {
			// The library panics on numbers its big.Rat parser refuses (an
			// exponent past a million): one manifest must not stop the load.
			if p := recover(); p != nil {
				s, err = nil, fmt.Errorf("the schema library failed on it (%v); a number may be out of range", p)
			}
		}()
		if err := c.AddResource(u, bytes.NewReader(schema)); err != nil {
			return nil, cleanSchemaError(err, u)
		}
		if s, err = c.Compile(u); err != nil {
			return nil, cleanSchemaError(err, u)
		}
		return s, nil
	})
}

// cleanSchemaError drops the library's prefixes and the synthetic URL so
// the message reads well after file:path.
func cleanSchemaError(err error, u string) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		var parts []string
		for _, v := range Violations(ve) {
			if v.Pointer == "" {
				parts = append(parts, v.Message)
			} else {
				parts = append(parts, v.Path()+": "+v.Message)
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

// Violation is one reason a value failed a schema.
type Violation struct {
	// Pointer is the JSON pointer of the failing value ("" = the root).
	Pointer string
	// Message says why, e.g. "expected string, but got number".
	Message string
	// Keyword is the schema keyword that failed, e.g. "type".
	Keyword string
}

// Path returns the failing value's location as a JSON path: "" for the
// root, else e.g. "items[2].name".
func (v Violation) Path() string { return pointerToPath(v.Pointer) }

// Violations flattens a validation error into its leaf causes, the ones
// that say what is actually wrong. Any other error becomes one violation
// at the root.
func Violations(err error) []Violation { return violations(err, nil) }

// violations is Violations of the error of a check whose elements past
// the first maxDescribed that failed are undescribed: they are counted
// in one last violation.
func violations(err error, undescribed *jsonschema.ValidationError) []Violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	more := 0
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch {
		case e == undescribed:
			more++
		case len(e.Causes) == 0:
			kw := e.KeywordLocation[strings.LastIndexByte(e.KeywordLocation, '/')+1:]
			out = append(out, Violation{Pointer: e.InstanceLocation, Message: e.Message, Keyword: kw})
		default:
			for _, c := range e.Causes {
				walk(c)
			}
		}
	}
	walk(ve)
	if more > 0 {
		out = append(out, Violation{Message: fmt.Sprintf("%d more elements or members fail (the first %d that fail are described)", more, maxDescribed)})
	}
	return out
}

// Limits bound what is decoded for a schema check, so that no value costs
// more than a small, known amount to check: the schema library's work
// grows with the square of a number's digits and, for values invalid
// against a recursive schema, with the cube of their depth. Zero fields
// mean the defaults.
type Limits struct {
	// Depth is the deepest nesting of arrays and objects (default 64).
	Depth int
	// NumberLength is the longest number literal, in characters (default 100).
	NumberLength int
	// Size is the largest value, in bytes (default 8 MiB).
	Size int
	// Values is the most values, at any depth, in one value (default
	// 500,000): decoded for the check, each holds some 70 bytes.
	Values int
}

// Default limits, for the zero fields of Limits.
const (
	DefaultDepth        = 64
	DefaultNumberLength = 100
	DefaultSize         = 8 << 20
	DefaultValues       = 500_000
)

func (l Limits) orDefaults() Limits {
	if l.Depth <= 0 {
		l.Depth = DefaultDepth
	}
	if l.NumberLength <= 0 {
		l.NumberLength = DefaultNumberLength
	}
	if l.Size <= 0 {
		l.Size = DefaultSize
	}
	if l.Values <= 0 {
		l.Values = DefaultValues
	}
	return l
}

// A LimitError says which of the Limits a value passed. Its message
// completes a sentence about the value: "is nested deeper than 64 levels".
type LimitError struct {
	// Limit names the limit: "depth", "number length", "size" or
	// "values".
	Limit string
	msg   string
}

func (e *LimitError) Error() string { return e.msg }

var defaultDecoder = Limits{}.Decoder()

// A Decoder decodes values within its Limits. It is safe for concurrent
// use.
type Decoder struct{ lim Limits }

// Decoder returns a decoder of values within l.
func (l Limits) Decoder() *Decoder { return &Decoder{l.orDefaults()} }

// decode decodes one JSON value as the schema library expects it:
// objects as map[string]any, arrays as []any, numbers as json.Number
// (from encoding/json), which the library compares exactly. Duplicate
// names, invalid UTF-8 and data after the value are errors, and so is a
// value past the limits (a *LimitError). The value is built from the
// library's tokens: the reflective decoder costs several times more for
// the small arguments of a tool call. It also returns the number of
// values, the value's own and those it holds, at any depth.
func (d *Decoder) decode(data []byte) (v any, values int, err error) {
	if len(data) > d.lim.Size {
		return nil, 0, &LimitError{"size", fmt.Sprintf("is %d bytes, more than the %d that are checked", len(data), d.lim.Size)}
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	v, err = d.value(dec, &values)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, 0, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, 0, errors.New("invalid data after top-level value")
	}
	return v, values, nil
}

// value decodes the next value, adding to *values the values it holds.
func (d *Decoder) value(dec *jsontext.Decoder, values *int) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if *values++; *values > d.lim.Values {
		return nil, &LimitError{"values", fmt.Sprintf("holds more than the %d values that are checked", d.lim.Values)}
	}
	switch tok.Kind() {
	case '{', '[':
		if dec.StackDepth() > d.lim.Depth {
			return nil, &LimitError{"depth", fmt.Sprintf("is nested deeper than the %d levels that are checked", d.lim.Depth)}
		}
		if tok.Kind() == '[' {
			a := []any{}
			for dec.PeekKind() != ']' {
				e, err := d.value(dec, values)
				if err != nil {
					return nil, err
				}
				a = append(a, e)
			}
			_, err := dec.ReadToken()
			return a, err
		}
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if m[k.String()], err = d.value(dec, values); err != nil {
				return nil, err
			}
		}
		_, err := dec.ReadToken()
		return m, err
	case '"':
		return tok.String(), nil
	case '0':
		num := tok.String()
		if len(num) > d.lim.NumberLength {
			return nil, &LimitError{"number length", fmt.Sprintf("has a number of %d characters, more than the %d that are checked", len(num), d.lim.NumberLength)}
		}
		return stdjson.Number(num), nil
	case 't', 'f':
		return tok.Bool(), nil
	}
	return nil, nil // null
}
