package audit

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// Redacted replaces a secret value.
const Redacted = "[redacted]"

// Bounds of the values an entry keeps.
const (
	maxValuesIn = 256 << 10 // larger arguments are not even read for values
	maxValues   = 4 << 10   // bytes of an entry's values, after cutting strings
	maxString   = 200       // bytes of one string value
)

// secretNames mark a member as secret when its name contains one of
// them, compared in lower case without '_', '-' or '.': "api_key",
// "X-Auth-Token" and "clientSecret" are secrets. Redacting a harmless
// "max_tokens" too is the price of never writing a secret.
var secretNames = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "authorization", "credential", "privatekey", "cookie"}

// SecretName reports whether a member of this name holds a secret.
func SecretName(name string) bool {
	n := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(name))
	for _, s := range secretNames {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Values returns the arguments of a call as the log keeps them: every
// member whose name marks it secret (SecretName), or whose schema in
// inputSchema says writeOnly: true or format: password, replaced by
// Redacted, at any depth; strings longer than 200 bytes cut. Members keep
// their order and numbers their digits. When the result would still be
// larger than 4 KiB, or the arguments are larger than 256 KiB or not
// JSON, it returns nil: cut reports that values were shortened or left
// out.
func Values(inputSchema, args jsontext.Value) (values jsontext.Value, cut bool) {
	if len(args) > maxValuesIn {
		return nil, true
	}
	var root any
	if json.Unmarshal(inputSchema, &root) != nil {
		root = nil // a tool without a usable schema: names still count
	}
	r := redactor{root: root}
	var out bytes.Buffer
	dec := jsontext.NewDecoder(bytes.NewBuffer(args)) // read in place, never written
	enc := jsontext.NewEncoder(&out)
	if err := r.copy(dec, enc, r.expand(root)); err != nil || out.Len() > maxValues+1 {
		return nil, true
	}
	return jsontext.Value(bytes.TrimSuffix(out.Bytes(), []byte("\n"))), r.cut
}

// redactor copies a value, token by token, redacting what its schema or
// its names mark secret.
type redactor struct {
	root any  // the input schema, decoded, for $ref
	cut  bool // a string was shortened
}

// schema is a JSON Schema object, decoded. Boolean schemas and anything
// else that is not an object say nothing about secrets.
type schema = map[string]any

func (r *redactor) copy(dec *jsontext.Decoder, enc *jsontext.Encoder, schemas []schema) error {
	if secret(schemas) {
		if err := dec.SkipValue(); err != nil {
			return err
		}
		return enc.WriteToken(jsontext.String(Redacted))
	}
	switch dec.PeekKind() {
	case '{':
		return r.object(dec, enc, schemas)
	case '[':
		return r.array(dec, enc, schemas)
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		s := tok.String()
		if len(s) > maxString {
			s, r.cut = safetext.Field(s, maxString), true
		}
		return enc.WriteToken(jsontext.String(s))
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return enc.WriteValue(v)
}

func (r *redactor) object(dec *jsontext.Decoder, enc *jsontext.Encoder, schemas []schema) error {
	if err := copyToken(dec, enc); err != nil {
		return err
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		if err := enc.WriteToken(tok); err != nil {
			return err
		}
		if SecretName(name) {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			if err := enc.WriteToken(jsontext.String(Redacted)); err != nil {
				return err
			}
			continue
		}
		if err := r.copy(dec, enc, r.member(schemas, name)); err != nil {
			return err
		}
	}
	return copyToken(dec, enc)
}

func (r *redactor) array(dec *jsontext.Decoder, enc *jsontext.Encoder, schemas []schema) error {
	if err := copyToken(dec, enc); err != nil {
		return err
	}
	for i := 0; dec.PeekKind() != ']' && dec.PeekKind() != 0; i++ {
		if err := r.copy(dec, enc, r.item(schemas, i)); err != nil {
			return err
		}
	}
	return copyToken(dec, enc)
}

func copyToken(dec *jsontext.Decoder, enc *jsontext.Encoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	return enc.WriteToken(tok)
}

// secret reports whether one of the schemas that apply to a value marks
// it secret.
func secret(schemas []schema) bool {
	for _, s := range schemas {
		if s["writeOnly"] == true || s["format"] == "password" {
			return true
		}
	}
	return false
}

// member returns the schemas that apply to the member name of an object
// the given schemas apply to: its properties entry, or else
// additionalProperties.
func (r *redactor) member(schemas []schema, name string) []schema {
	var out []schema
	for _, s := range schemas {
		if props, ok := s["properties"].(schema); ok {
			if p, ok := props[name]; ok {
				out = append(out, r.expand(p)...)
				continue
			}
		}
		out = append(out, r.expand(s["additionalProperties"])...)
	}
	return out
}

// item returns the schemas that apply to item i of an array: its
// prefixItems (or draft-07 array items) entry, or else items.
func (r *redactor) item(schemas []schema, i int) []schema {
	var out []schema
	for _, s := range schemas {
		prefix, _ := s["prefixItems"].([]any)
		if tuple, ok := s["items"].([]any); ok {
			prefix = tuple
		}
		switch {
		case i < len(prefix):
			out = append(out, r.expand(prefix[i])...)
		case s["items"] != nil:
			out = append(out, r.expand(s["items"])...)
		}
	}
	return out
}

// maxExpand bounds the schemas one value expands to, through $ref and
// allOf, anyOf, oneOf: a cycle of references ends there.
const maxExpand = 64

// expand returns the schema objects that apply to a value v applies to:
// v itself, what its local $ref points to, and the members of its allOf,
// anyOf and oneOf (any of them may mark a value secret).
func (r *redactor) expand(v any) []schema {
	var out []schema
	var walk func(v any)
	walk = func(v any) {
		s, ok := v.(schema)
		if !ok || len(out) == maxExpand {
			return
		}
		out = append(out, s)
		if ref, ok := s["$ref"].(string); ok {
			walk(r.resolve(ref))
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			subs, _ := s[k].([]any)
			for _, sub := range subs {
				walk(sub)
			}
		}
	}
	walk(v)
	return out
}

// resolve follows a reference within the input schema ("#/$defs/x");
// other references resolve to nothing.
func (r *redactor) resolve(ref string) any {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	v := r.root
	for tok := range strings.SplitSeq(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" && ptr == "" {
			break
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := v.(schema)
		if !ok {
			return nil
		}
		v = m[tok]
	}
	return v
}
