package manifest

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
)

// The manifest and its tools are filled from the document already decoded
// for the format check (strings and booleans) and from the raw members of
// the file (schemas and other values kept as JSON), as encoding/json would
// fill the tagged structs: null leaves a field's zero value, a member of
// the wrong type is an error, unknown members are ignored, and of a
// repeated member the last counts. Names match exactly; one that differs
// from a known name only in case was reported before (see checkCase).
// Scanning the file once more with encoding/json cost 40% of a load.
//
// A known name that appears twice in the manifest, its implementation, a
// tool or its annotations is an error: encoding/json would merge the two
// (keeping the first's methods and adding the second's), the format check
// sees only the last, and the Rust bridge refuses such a file (serde's
// "duplicate field").

// decodeManifest fills a Manifest (without tools) from the document top,
// decoded from data, and returns the raw tools.
func decodeManifest(data []byte, top map[string]any) (m Manifest, tools [][]byte, err error) {
	f := fields{obj: top, err: &err}
	m.ID = f.str("id")
	m.Name = f.str("name")
	m.Description = f.str("description")
	m.Version = f.str("version")
	m.ManifestVersion = f.str("manifest_version")
	m.Category = f.str("category")
	if impl, ok := f.object("implementation"); ok {
		m.Implementation.Type = impl.str("type")
		if methods, ok := impl.object("methods"); ok {
			m.Implementation.Methods = make(map[string]string, len(methods.obj))
			for name := range methods.obj {
				m.Implementation.Methods[name] = methods.str(name)
			}
		}
	}
	if err != nil {
		return Manifest{}, nil, err
	}
	err = members(data, manifestKeys, "", func(name, value []byte) error {
		switch string(name) {
		case "implementation":
			return members(value, implKeys, "implementation", nil)
		case "tools":
			tools = nil
			if string(value) == "null" {
				return nil
			}
			return jsonscan.Array(value, func(tool []byte) error {
				tools = append(tools, tool)
				return nil
			})
		case "requires":
			m.Requires = bytes.Clone(value)
		case "compatibility":
			m.Compatibility = bytes.Clone(value)
		}
		return nil
	})
	if err == jsonscan.ErrNotArray {
		err = fmt.Errorf("tools: want an array")
	}
	return m, tools, err
}

// decodeTool fills t from the tool's document doc, decoded from raw.
func decodeTool(raw []byte, doc any, t *Tool) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("want an object, not %s", jsonKind(doc))
	}
	var err error
	f := fields{obj: obj, err: &err}
	t.Name = f.str("name")
	t.Title = f.str("title")
	t.Description = f.str("description")
	t.MCPExpose = f.boolPtr("mcpExpose")
	t.MCPExposeSnake = f.boolPtr("mcp_expose")
	if a, ok := f.object("annotations"); ok {
		t.Annotations = &Annotations{
			Title:           a.str("title"),
			ReadOnlyHint:    a.boolPtr("readOnlyHint"),
			DestructiveHint: a.boolPtr("destructiveHint"),
			IdempotentHint:  a.boolPtr("idempotentHint"),
			OpenWorldHint:   a.boolPtr("openWorldHint"),
		}
	}
	if err != nil {
		return err
	}
	return members(raw, toolKeys, "", func(name, value []byte) error {
		switch string(name) {
		case "annotations":
			return members(value, annotationKeys, "annotations", nil)
		case "inputSchema":
			t.InputSchema = compactCopy(value)
		case "outputSchema":
			t.OutputSchema = compactCopy(value)
		}
		return nil
	})
}

// compactCopy returns value without white space, the form schemas are
// listed in, so the tool list shares their bytes instead of keeping a
// second copy; in memory of its own, so the file it came from is not
// kept. Compact copies only a value that has white space.
func compactCopy(value []byte) []byte {
	c, err := jsonscan.Compact(value)
	if err != nil || len(c) == 0 || &c[0] == &value[0] {
		return bytes.Clone(value)
	}
	return c
}

// names finds a known name that appears twice among an object's members.
type names struct {
	known []string // at most 64
	path  string   // the object's, for the message
	seen  uint64   // a bit per name of known
}

func (n *names) once(name []byte) error {
	for i, k := range n.known {
		if string(name) == k {
			if n.seen&(1<<i) != 0 {
				return &repeatedName{path: joinPath(n.path, k)}
			}
			n.seen |= 1 << i
		}
	}
	return nil
}

// repeatedName is a known name that appears twice, at path (relative to
// the tool, for a tool's).
type repeatedName struct{ path string }

func (e *repeatedName) Error() string {
	return fmt.Sprintf("%q appears twice; a name may appear only once", e.path[strings.LastIndexByte(e.path, '.')+1:])
}

// members calls f, when set, with each member of the object data (at
// path), and fails on a name of known that appears twice; anything but
// an object is left to the format check.
func members(data []byte, known []string, path string, f func(name, value []byte) error) error {
	seen := names{known: known, path: path}
	err := jsonscan.Object(data, func(rawKey, value []byte) error {
		name := jsonscan.Name(rawKey)
		if err := seen.once(name); err != nil || f == nil {
			return err
		}
		return f(name, value)
	})
	if err == jsonscan.ErrNotObject {
		return nil
	}
	return err
}

// fields reads the members of a decoded object; the first member of the
// wrong type is kept in *err.
type fields struct {
	obj  map[string]any
	path string
	err  *error
}

func (f fields) fail(key, want string, v any) {
	if *f.err == nil {
		*f.err = fmt.Errorf("%s: want %s, not %s", joinPath(f.path, key), want, jsonKind(v))
	}
}

func (f fields) str(key string) string {
	switch v := f.obj[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		f.fail(key, "a string", v)
		return ""
	}
}

func (f fields) boolPtr(key string) *bool {
	switch v := f.obj[key].(type) {
	case nil:
		return nil
	case bool:
		return &v
	default:
		f.fail(key, "a boolean", v)
		return nil
	}
}

// object returns the member key as fields, and whether it is an object
// (absent and null are not).
func (f fields) object(key string) (fields, bool) {
	switch v := f.obj[key].(type) {
	case nil:
		return fields{}, false
	case map[string]any:
		return fields{obj: v, path: joinPath(f.path, key), err: f.err}, true
	default:
		f.fail(key, "an object", v)
		return fields{}, false
	}
}
