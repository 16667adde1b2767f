package manifest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Header is a parameter of a tool that MCP clients mirror into an HTTP
// header, Mcp-Param-{Name}, on the Streamable HTTP transport: its
// property in the inputSchema says "x-mcp-header": Name.
type Header struct {
	// Name is the x-mcp-header value, as the schema spells it.
	Name string
	// Path is the chain of property names from the schema's root to the
	// parameter: ["region"], or ["location", "region"] for a nested one.
	Path []string
}

// headerKeyword is the annotation that marks a property for a header.
const headerKeyword = "x-mcp-header"

// subschemas are the keywords, other than properties, whose values are
// schemas: one, an array of them, or (for the keywords marked true) an
// object whose members are. An x-mcp-header under any of them cannot be
// reached from the root through properties alone. The values of other
// keywords (const, enum, default, examples, unknown ones) are data, not
// schemas: an "x-mcp-header" member in them is no annotation.
var subschemas = map[string]bool{
	"items": false, "prefixItems": false, "additionalItems": false, "contains": false,
	"unevaluatedItems": false, "additionalProperties": false, "unevaluatedProperties": false,
	"propertyNames": false, "contentSchema": false,
	"allOf": false, "anyOf": false, "oneOf": false, "not": false,
	"if": false, "then": false, "else": false,
	"$defs": true, "definitions": true, "patternProperties": true, "dependentSchemas": true,
	"dependencies": true, // draft 7: a schema, or an array of names, per property
}

// headers checks the x-mcp-header annotations of the tool's inputSchema,
// doc being the tool decoded, against MCP's rules, and notes the valid
// ones in t.Headers. A tool that breaks a rule is marked broken: MCP
// clients must drop it from their lists, so it cannot be served.
func (p *parser) headers(t *Tool, doc any) {
	fields, _ := doc.(map[string]any)
	c := headerCheck{p: p, t: t, seen: map[string]Header{}}
	c.schema(fields["inputSchema"], t.Path()+".inputSchema", nil, "")
	if c.broken {
		t.Broken = true
		return
	}
	t.Headers = c.found
}

// headerCheck is the walk of one tool's inputSchema for x-mcp-header.
type headerCheck struct {
	p      *parser
	t      *Tool
	seen   map[string]Header // by lower-case name
	found  []Header
	broken bool
}

// schema checks the schema object node, at path in the file; args is the
// chain of properties leading to it, and under the first other keyword
// on the way, "" when there is none.
func (c *headerCheck) schema(node any, path string, args []string, under string) {
	m, ok := node.(map[string]any)
	if !ok {
		return // a boolean schema, or a fault the schema's compiler reports
	}
	if v, ok := m[headerKeyword]; ok {
		c.annotation(m, v, joinPath(path, headerKeyword), args, under)
	}
	// In order, so that problems, and the headers found, come out the
	// same on every load.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		at := joinPath(path, k)
		if k == "properties" {
			props, _ := m[k].(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(props)) {
				c.schema(props[name], joinPath(at, name), append(slices.Clip(args), name), under)
			}
			continue
		}
		named, ok := subschemas[k]
		if !ok {
			continue
		}
		off := cmp.Or(under, k)
		switch v := m[k].(type) {
		case []any:
			for i, e := range v {
				c.schema(e, at+"["+strconv.Itoa(i)+"]", args, off)
			}
		case map[string]any:
			if !named {
				c.schema(v, at, args, off)
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(v)) {
				c.schema(v[name], joinPath(at, name), args, off)
			}
		}
	}
}

// annotation checks the x-mcp-header v of the schema object m, at path
// in the file; args and under are as for schema.
func (c *headerCheck) annotation(m map[string]any, v any, path string, args []string, under string) {
	name, isString := v.(string)
	what := fmt.Sprintf("x-mcp-header %q on argument %s", name, strings.Join(args, "."))
	var rule string
	switch {
	case under != "":
		what = fmt.Sprintf("x-mcp-header %q", name)
		rule = fmt.Sprintf(`is under %s: only a property reached from the root through "properties" alone can be mirrored into a header`, under)
	case len(args) == 0:
		what = fmt.Sprintf("x-mcp-header %q", name)
		rule = "is on the schema's root: only a property can be mirrored into a header"
	case !isString:
		what = "x-mcp-header on argument " + strings.Join(args, ".")
		rule = "is not a string: it names the header, Mcp-Param-{x-mcp-header}"
	case name == "":
		rule = "is empty: it names the header, Mcp-Param-{x-mcp-header}"
	case !isToken(name):
		rule = "is not an HTTP token: letters, digits and !#$%&'*+-.^_`|~ only"
	default:
		rule = typeRule(m["type"])
	}
	if rule == "" {
		h := Header{Name: name, Path: args}
		first, dup := c.seen[strings.ToLower(name)]
		if !dup {
			c.seen[strings.ToLower(name)] = h
			c.found = append(c.found, h)
			return
		}
		rule = fmt.Sprintf("repeats x-mcp-header %q of argument %s: header names ignore case, so each must be unique", first.Name, strings.Join(first.Path, "."))
	}
	c.broken = true
	c.p.add(Error, path, c.t.Name, "%s %s; MCP clients drop a tool with an invalid x-mcp-header, so tool %q is not served", what, rule, c.t.Name)
}

// typeRule says why a property whose "type" is typ cannot be mirrored
// into a header; "" when it can: a string, an integer or a boolean. A
// list of types is refused too, even one that only adds "null": clients
// skip the header of such a property, and the server would then refuse
// their calls for lack of it.
func typeRule(typ any) string {
	switch typ {
	case "string", "integer", "boolean":
		return ""
	case nil:
		return `has no "type": only a property whose "type" is "string", "integer" or "boolean" can be mirrored into a header`
	case "number":
		return `is on a "number": only "string", "integer" and "boolean" can be mirrored into a header, not fractions; use "integer" for whole numbers`
	}
	if s, ok := typ.(string); ok {
		return fmt.Sprintf(`is on a %q: only "string", "integer" and "boolean" can be mirrored into a header`, s)
	}
	return `has a "type" that is not one string: only a property whose "type" is "string", "integer" or "boolean" can be mirrored into a header`
}

// isToken reports whether s is an HTTP token (RFC 9110, section 5.6.2):
// one or more tchar, which excludes spaces, controls and delimiters.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}
