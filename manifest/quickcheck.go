package manifest

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
)

// Checking a schema at load by compiling it costs about 45 KB of garbage
// and tens of microseconds per schema, nearly all of it the schema
// library validating the schema against the draft 2020-12 meta-schema.
// With a thousand tools that was most of the bridge's start-up and its
// peak memory. Most tool schemas use only plain keywords whose meta-schema
// rules are simple, so surelyCompiles checks those rules directly and the
// library compiles the schema on the tool's first call (Tool.Schemas).
// Anything it is not sure about (references, identifiers, unknown
// keywords, integers written as 1.0, ...) goes to the library at load as
// before, which also words every error. So surelyCompiles only ever says
// "yes, this compiles"; FuzzSurelyCompiles checks that the library agrees
// whenever it does.

// draft2020 is the only $schema the fast path accepts: it is the default.
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// maxQuickDepth bounds the recursion; deeper schemas go to the library.
const maxQuickDepth = 32

// surelyCompiles reports whether schema, decoded with json.Number, is
// certainly a valid draft 2020-12 schema that the library compiles.
// false means "not sure", not "invalid".
func surelyCompiles(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok {
		_, ok := schema.(bool)
		return ok
	}
	if s, ok := m["$schema"]; ok && s != draft2020 {
		return false
	}
	return quickObject(m, 0)
}

func quickSchema(v any, depth int) bool {
	switch v := v.(type) {
	case bool:
		return true
	case map[string]any:
		if _, ok := v["$schema"]; ok {
			return false // only at the root
		}
		return quickObject(v, depth)
	}
	return false
}

func quickObject(m map[string]any, depth int) bool {
	if depth > maxQuickDepth {
		return false
	}
	for k, v := range m {
		if !quickKeyword(k, v, depth) {
			return false
		}
	}
	return true
}

func quickKeyword(k string, v any, depth int) bool {
	switch k {
	case "$schema": // checked by the caller
		return true
	case "title", "description", "$comment", "format", "contentEncoding", "contentMediaType":
		_, ok := v.(string)
		return ok
	case "default", "const":
		return true
	case "enum", "examples":
		_, ok := v.([]any)
		return ok
	case "deprecated", "readOnly", "writeOnly", "uniqueItems":
		_, ok := v.(bool)
		return ok
	case "type":
		return quickType(v)
	case "required":
		return quickStringSet(v)
	case "dependentRequired":
		o, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range o {
			if !quickStringSet(e) {
				return false
			}
		}
		return true
	case "properties", "$defs", "dependentSchemas":
		o, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range o {
			if !quickSchema(e, depth+1) {
				return false
			}
		}
		return true
	case "patternProperties":
		o, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for p, e := range o {
			if _, err := regexp.Compile(p); err != nil || !quickSchema(e, depth+1) {
				return false
			}
		}
		return true
	case "additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else",
		"unevaluatedProperties", "unevaluatedItems", "contentSchema":
		return quickSchema(v, depth+1)
	case "prefixItems", "allOf", "anyOf", "oneOf":
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return false
		}
		for _, e := range a {
			if !quickSchema(e, depth+1) {
				return false
			}
		}
		return true
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil && i >= 0
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return true // the usual case, which big.Rat parses too, at a tenth of the cost
		}
		_, ok = new(big.Rat).SetString(string(n))
		return ok
	case "multipleOf":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(string(n))
		return ok && r.Sign() > 0
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, err := regexp.Compile(s)
		return err == nil
	}
	return false // $ref, $id, $anchor, unknown keywords...: ask the library
}

// quickType checks "type": one simple type, or a non-empty array of
// distinct ones.
func quickType(v any) bool {
	switch v := v.(type) {
	case string:
		return typeBits[v] != 0
	case []any:
		if len(v) == 0 {
			return false
		}
		seen := map[string]bool{}
		for _, e := range v {
			s, ok := e.(string)
			if !ok || typeBits[s] == 0 || seen[s] {
				return false
			}
			seen[s] = true
		}
		return true
	}
	return false
}

// quickStringSet checks an array of distinct strings.
func quickStringSet(v any) bool {
	a, ok := v.([]any)
	if !ok {
		return false
	}
	seen := make(map[string]bool, len(a))
	for _, e := range a {
		s, ok := e.(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// surelyWellFormed reports whether a decoded manifest certainly matches
// manifest.schema.json, so that the schema library need not check it:
// that check was a fifth of a large load. It follows the schema rule by
// rule; false sends the manifest to the library, which words the
// problems. FuzzSurelyWellFormed checks the two agree whenever this is sure.
func surelyWellFormed(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch k {
		case "id":
			if s, ok := v.(string); !ok || s == "" {
				return false
			}
		case "$schema", "name", "description", "version", "manifest_version", "category":
			if _, ok := v.(string); !ok {
				return false
			}
		case "requires", "compatibility":
			if _, ok := v.(map[string]any); !ok {
				return false
			}
		case "tools":
			tools, ok := v.([]any)
			if !ok {
				return false
			}
			for _, t := range tools {
				if !wellFormedTool(t) {
					return false
				}
			}
		case "implementation":
			if !wellFormedImplementation(v) {
				return false
			}
		}
	}
	_, hasID := m["id"]
	_, hasTools := m["tools"]
	return hasID && hasTools
}

func wellFormedTool(v any) bool {
	t, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range t {
		switch k {
		case "name":
			if s, ok := v.(string); !ok || s == "" {
				return false
			}
		case "title", "description":
			if _, ok := v.(string); !ok {
				return false
			}
		case "inputSchema", "outputSchema":
			s, ok := v.(map[string]any)
			if !ok || s["type"] != "object" {
				return false
			}
		case "annotations":
			a, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for k, v := range a {
				var ok bool
				switch k {
				case "title":
					_, ok = v.(string)
				case "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint":
					_, ok = v.(bool)
				default:
					ok = true
				}
				if !ok {
					return false
				}
			}
		case "mcpExpose", "mcp_expose":
			if _, ok := v.(bool); !ok {
				return false
			}
		}
	}
	_, hasName := t["name"]
	_, hasInput := t["inputSchema"]
	return hasName && hasInput
}

func wellFormedImplementation(v any) bool {
	impl, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if t, ok := impl["type"]; ok {
		if _, ok := t.(string); !ok {
			return false
		}
	}
	if ms, ok := impl["methods"]; ok {
		methods, ok := ms.(map[string]any)
		if !ok {
			return false
		}
		for _, m := range methods {
			if s, ok := m.(string); !ok || s == "" {
				return false
			}
		}
	}
	return true
}
