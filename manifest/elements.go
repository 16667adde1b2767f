package manifest

import "github.com/santhosh-tekuri/jsonschema/v5"

// maxDescribed is the number of failing elements (and members) of a check
// whose violations are kept in detail; each further one is kept as a
// pointer to one shared error. The schema library keeps every violation
// until a check ends, a few hundred bytes each: a megabyte of an array of
// numbers where strings are expected would otherwise hold 200 MB.
const maxDescribed = 1000

// hookElements puts each schema object that a keyword applies to every
// element of an array or member of an object (items, additionalProperties,
// propertyNames, …) behind an object of ours whose hook applies it. So
// each element is a step, taken before the element is checked, even
// where its type does not match (the library returns from such an object
// before it runs its extensions: a million numbers where strings are
// expected would otherwise be one step, taken after seconds), and the
// violations of an element past the first maxDescribed that fail are not
// kept.
func (h *hooks) hookElements(root *jsonschema.Schema) {
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema)
	// each walks s and returns what keyword, which applies s to each
	// element, must refer to instead.
	each := func(keyword string, s *jsonschema.Schema) *jsonschema.Schema {
		walk(s)
		if s == nil || (s.Always != nil && *s.Always) {
			return s // nothing to check
		}
		h.parts++
		return &jsonschema.Schema{
			Location:   s.Location,
			Draft:      s.Draft,
			Extensions: map[string]jsonschema.ExtSchema{hooksName: &elementHook{state: h.state, schema: s, keyword: keyword}},
			// The library's defaults for an object without these keywords.
			MinProperties: -1, MaxProperties: -1, MinItems: -1, MaxItems: -1,
			MinContains: 1, MaxContains: -1, MinLength: -1, MaxLength: -1,
		}
	}
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		// Applied to the value itself, or to the parts of it that the
		// schema names: the object's own hook counts them.
		for _, c := range []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.DynamicRef, s.Not, s.If, s.Then, s.Else, s.ContentSchema} {
			walk(c)
		}
		for _, cs := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
			for _, c := range cs {
				walk(c)
			}
		}
		for _, c := range s.Properties {
			walk(c)
		}
		for _, c := range s.DependentSchemas {
			walk(c)
		}
		for _, d := range s.Dependencies {
			if c, ok := d.(*jsonschema.Schema); ok {
				walk(c)
			}
		}
		// Applied to each element or member.
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			s.Items = each("items", items)
		case []*jsonschema.Schema:
			for _, c := range items {
				walk(c)
			}
		}
		if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			s.AdditionalItems = each("additionalItems", c)
		}
		if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			s.AdditionalProperties = each("additionalProperties", c)
		}
		for re, c := range s.PatternProperties {
			s.PatternProperties[re] = each("patternProperties", c)
		}
		s.Items2020 = each("items", s.Items2020)
		s.Contains = each("contains", s.Contains)
		s.UnevaluatedItems = each("unevaluatedItems", s.UnevaluatedItems)
		s.PropertyNames = each("propertyNames", s.PropertyNames)
		s.UnevaluatedProperties = each("unevaluatedProperties", s.UnevaluatedProperties)
	}
	walk(root)
}

// elementHook applies schema to one element or member, as one step.
type elementHook struct {
	state  *checkState
	schema *jsonschema.Schema
	// keyword is the one that applies schema, which ends the location of
	// a violation of a false schema, as without the hook.
	keyword string
}

func (n *elementHook) Validate(ctx jsonschema.ValidationContext, v any) error {
	n.state.step(v)
	err := ctx.Validate(n.schema, n.keyword, v, "")
	if err == nil {
		return nil
	}
	if n.state.failed++; n.state.failed > maxDescribed {
		return n.state.undescribed
	}
	return err
}
