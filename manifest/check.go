package manifest

import (
	"context"
	"fmt"
	"reflect"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// A Schema is a compiled JSON Schema whose checks are bounded: a check
// ends when its context does, and when it has taken more steps than the
// value and the schema justify, so that no schema and no value can make
// one cost more than a small, known amount (see Check). It is safe for
// concurrent use.
type Schema struct {
	compile func() (*compiled, error) // another copy
	idle    chan *compiled            // copies that no check is using
}

// maxIdle is the number of copies of a schema that are kept for the next
// checks: checks take microseconds, so few run at once. Copies are not
// kept in a sync.Pool, which drops them at each garbage collection: a
// copy costs a hundred times a check to compile.
const maxIdle = 8

// compiled is one copy of a schema, used by one check at a time. The
// library passes nothing of a check's own to the hooks it runs, so the
// hooks of each copy share one checkState, which the running check sets.
type compiled struct {
	schema *jsonschema.Schema
	state  *checkState
	parts  int // schema objects, for the bounds
}

// newSchema compiles a schema with build, given a compiler set up for
// bounded checks; build is called again for each further copy.
func newSchema(build func(*jsonschema.Compiler) (*jsonschema.Schema, error)) (*Schema, error) {
	s := &Schema{idle: make(chan *compiled, maxIdle), compile: func() (*compiled, error) {
		st := &checkState{undescribed: &jsonschema.ValidationError{Message: "fails too"}}
		h := &hooks{state: st}
		c := newCompiler()
		c.RegisterExtension(hooksName, nil, h)
		for name := range jsonschema.Formats {
			// The library calls a format's function only where the
			// schema's draft asserts formats. Ours notes that it does and
			// passes: the hooks check the format, bounded, and without
			// quoting the value in the message.
			c.Formats[name] = st.assertFormats
		}
		// Draft 7 asserts contentEncoding and contentMediaType, and
		// checks contentSchema against the content decoded by the
		// library, past the Decoder's limits. Like later drafts, they
		// are annotations here: nil is no check.
		for name := range jsonschema.Decoders {
			c.Decoders[name] = nil
		}
		for name := range jsonschema.MediaTypes {
			c.MediaTypes[name] = nil
		}
		js, err := build(c)
		if err != nil {
			return nil, err
		}
		h.hookElements(js)
		return &compiled{schema: js, state: st, parts: h.parts}, nil
	}}
	first, err := s.compile()
	if err != nil {
		return nil, err
	}
	s.idle <- first
	return s, nil
}

// Check decodes data within the limits of d and validates it against s.
// It returns the violations, none when the value is valid, or an error
// when the value cannot be checked: it is not JSON, or passes one of d's
// limits (a *LimitError); checking it would take more steps than its size
// and the schema's justify (a *LimitError, see ErrTooMuchWork); or ctx
// ends first (ctx.Err()). Whatever the schema and the value, a check
// stops within moments of ctx, and holds memory in proportion to the
// value, not to the schema's work.
func (s *Schema) Check(ctx context.Context, d *Decoder, data []byte) ([]Violation, error) {
	v, values, err := d.decode(data)
	if err != nil {
		return nil, err
	}
	return s.validate(ctx, v, values)
}

// validate checks v, a value of the given number of values (counting
// every array, object and scalar) decoded by a Decoder, against s.
func (s *Schema) validate(ctx context.Context, v any, values int) ([]Violation, error) {
	var c *compiled
	select {
	case c = <-s.idle:
	default:
		var err error
		if c, err = s.compile(); err != nil {
			return nil, fmt.Errorf("compile schema: %w", err)
		}
	}
	defer func() {
		// A stopped check leaves nothing behind in the copy: the library
		// keeps the state of a validation on the stack.
		select {
		case s.idle <- c:
		default: // enough are kept
		}
	}()
	return c.validate(ctx, v, values)
}

func (c *compiled) validate(ctx context.Context, v any, values int) (vs []Violation, err error) {
	c.state.start(ctx.Done(), c.parts, values)
	defer func() {
		c.state.stop()
		switch p := recover().(type) {
		case nil:
		case stopCheck:
			if err = p.err; err == nil {
				err = ctx.Err()
			}
		default:
			// The library panics on numbers its big.Rat parser refuses
			// (an exponent past a million): the value is refused.
			vs = []Violation{{Message: fmt.Sprintf("cannot be checked: %v (a number may be out of range)", p)}}
		}
	}()
	if err := c.schema.Validate(v); err != nil {
		return violations(err, c.state.undescribed), nil
	}
	return nil, nil
}

// ErrTooMuchWork is the limit a check passes when the schema would check
// parts of the value over and over, as a schema whose alternatives each
// descend into the same children does, with work growing exponentially
// with the value's depth.
var ErrTooMuchWork = &LimitError{"work", "takes more steps to check than its size and the schema's justify: the schema checks the same parts of it over and over"}

// Bounds of a check's work, in steps: one step is the application of one
// schema object to one value. A check may take minSteps steps, plus
// stepsPerPair for each pair of a schema object and a value, and it may
// apply the schema's objects to any one array or object at most
// minVisits times, plus visitsPerPart for each schema object. Checks of
// real tools take a few steps per value; a schema whose alternatives all
// descend into the same children doubles the work at each level of the
// value, and the bound on visits catches that within a few levels, even
// when the value is padded to raise the bound on steps.
const (
	minSteps      = 10_000
	stepsPerPair  = 16
	minVisits     = 1024
	visitsPerPart = 16
	// countFrom is the step from which visits are counted, so that the
	// checks of small values never pay for counting them.
	countFrom = 256
)

// stopCheck is what a hook panics with to end a check at once; validate
// recovers it. err is the check's error, nil when its context ended.
type stopCheck struct{ err error }

// checkState is the state of the check running on a compiled copy, read
// by the copy's hooks.
type checkState struct {
	done      <-chan struct{} // the check's context's; nil when it never ends
	steps     int
	maxSteps  int
	visits    map[uintptr]int // by array or object, from step countFrom on
	maxVisits int
	// failed counts the elements and members that failed; past
	// maxDescribed, each is kept as undescribed.
	failed      int
	undescribed *jsonschema.ValidationError
	// formats says that the copy's draft asserts formats (the library
	// called a format function); it holds for the life of the copy.
	formats bool
}

func (st *checkState) start(done <-chan struct{}, parts, values int) {
	st.done, st.steps, st.visits, st.failed = done, 0, nil, 0
	st.maxSteps = minSteps + stepsPerPair*parts*values
	st.maxVisits = minVisits + visitsPerPart*parts
}

func (st *checkState) stop() { st.done, st.visits = nil, nil }

func (st *checkState) assertFormats(any) bool {
	st.formats = true
	return true
}

// step counts one application of a schema object to v, and ends the
// check when it is past its bounds or its context has ended.
func (st *checkState) step(v any) {
	st.steps++
	if st.steps > st.maxSteps {
		panic(stopCheck{ErrTooMuchWork})
	}
	select {
	case <-st.done:
		panic(stopCheck{})
	default:
	}
	if st.steps < countFrom {
		return
	}
	switch c := v.(type) {
	case map[string]any:
		if len(c) == 0 {
			return // childless: nothing to descend into
		}
	case []any:
		if len(c) == 0 {
			return
		}
	default:
		return
	}
	if st.visits == nil {
		st.visits = map[uintptr]int{}
	}
	// The value outlives the check, so its address names it.
	key := reflect.ValueOf(v).Pointer()
	st.visits[key]++
	if st.visits[key] > st.maxVisits {
		panic(stopCheck{ErrTooMuchWork})
	}
}

// hooksName is the name of the extension hooks, for the library.
const hooksName = "tairseach-bounds"

// hooks is the library extension that bounds a copy's checks: the library
// compiles it for every schema object, and runs the result at the end of
// each application of that object to a value (unless the value's type
// already failed), which is where a check is counted, stopped, and where
// formats are checked.
type hooks struct {
	state *checkState
	parts int
}

func (h *hooks) Compile(_ jsonschema.CompilerContext, m map[string]any) (jsonschema.ExtSchema, error) {
	h.parts++
	n := &hook{state: h.state}
	if f, ok := m["format"].(string); ok && formatKnown(f) {
		n.format = f
	}
	return n, nil
}

// hook is the extension compiled for one schema object.
type hook struct {
	state  *checkState
	format string // the object's format, when the library knows it
}

func (n *hook) Validate(ctx jsonschema.ValidationContext, v any) error {
	n.state.step(v)
	if n.format != "" && n.state.formats {
		if msg := checkFormat(n.format, v); msg != "" {
			return ctx.Error("format", "%s", msg)
		}
	}
	return nil
}
