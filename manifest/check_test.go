package manifest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// treeSchema is a tree of groups and items that both have children: each
// of its alternatives descends into the same children, so the schema
// library's work doubles with each level of the value.
const treeSchema = `{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"oneOf":[
 {"type":"object","properties":{"kind":{"const":"group"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kind"]},
 {"type":"object","properties":{"kind":{"const":"item"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kind"]}]}}}`

// tree returns a value for treeSchema, depth groups deep, ending in a
// node of kind leaf; pad, when not empty, is added to the root as "pad".
func tree(depth int, leaf, pad string) string {
	root := ""
	if pad != "" {
		root = `"pad":` + pad + ","
	}
	return `{` + root + strings.Repeat(`"kind":"group","children":[{`, depth) + `"kind":"` + leaf + `"` + strings.Repeat(`}]`, depth) + `}`
}

// diamondSchema applies levels of alternatives, each made of the level
// below twice, to one string: 2^levels steps however small the value.
func diamondSchema(levels int) string {
	defs := []string{`"d0":{"type":"string","minLength":1}`}
	for i := 1; i <= levels; i++ {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"allOf":[{"$ref":"#/$defs/d%d"}]}],"not":{"const":"x"}}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{"s":{"$ref":"#/$defs/d%d"}},"$defs":{%s}}`, levels, strings.Join(defs, ","))
}

func mustCompile(t testing.TB, schema string) *Schema {
	t.Helper()
	s, err := compileSchema("t", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkCopy checks data against a fresh copy of s and returns the
// outcome with the number of steps the check took.
func checkCopy(t *testing.T, ctx context.Context, s *Schema, data string) (vs []Violation, steps int, err error) {
	t.Helper()
	c, err := s.compile()
	if err != nil {
		t.Fatal(err)
	}
	v, values, err := defaultDecoder.decode([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	vs, err = c.validate(ctx, v, values)
	return vs, c.state.steps, err
}

func TestCheckBoundsTheWorkOfAnExponentialSchema(t *testing.T) {
	s := mustCompile(t, treeSchema)
	bigPad := "[" + strings.Repeat("0,", 99_999) + "0]"
	for _, tc := range []struct {
		name      string
		value     string
		valid     bool
		err       error
		stepsUpTo int
	}{
		{name: "a tree 6 deep is checked", value: tree(6, "item", ""), valid: true},
		{name: "an invalid tree 6 deep gets its violations", value: tree(6, "bogus", "")},
		{name: "a tree 24 deep stops at the bound on steps", value: tree(24, "item", ""), err: ErrTooMuchWork, stepsUpTo: minSteps + stepsPerPair*40*80},
		{name: "an invalid tree 24 deep stops too", value: tree(24, "bogus", ""), err: ErrTooMuchWork, stepsUpTo: minSteps + stepsPerPair*40*80},
		// 100,000 more values raise the bound on steps to millions; the
		// bound on the visits of one object stops the check as soon.
		{name: "a tree 24 deep padded with 100,000 values stops as soon", value: tree(24, "item", bigPad), err: ErrTooMuchWork, stepsUpTo: 40_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, steps, err := checkCopy(t, t.Context(), s, tc.value)
			switch {
			case err != tc.err:
				t.Fatalf("err = %v, want %v (violations %v)", err, tc.err, vs)
			case tc.err == nil && tc.valid != (len(vs) == 0):
				t.Errorf("violations = %v, want valid: %v", vs, tc.valid)
			case tc.stepsUpTo > 0 && steps > tc.stepsUpTo:
				t.Errorf("the check took %d steps, want at most %d", steps, tc.stepsUpTo)
			}
		})
	}
}

func TestCheckBoundsASchemaThatRepeatsItselfOnOneValue(t *testing.T) {
	s := mustCompile(t, diamondSchema(20))
	// The schema has fewer than 100 objects, the value 3 values.
	_, steps, err := checkCopy(t, t.Context(), s, `{"s":"a"}`)
	if max := minSteps + stepsPerPair*100*3; err != ErrTooMuchWork || steps > max {
		t.Errorf("err = %v after %d steps, want %v after at most %d", err, steps, ErrTooMuchWork, max)
	}
}

func TestCheckStopsWhenItsContextEnds(t *testing.T) {
	// With the value padded, the bound on steps is far away: only the
	// context can stop the check early.
	s := mustCompile(t, diamondSchema(30))
	value := `{"s":"a","pad":[` + strings.Repeat("0,", 99_999) + `0]}`
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"a cancelled check stops at its first step", cancelled, context.Canceled},
		{"a check past its deadline stops at its first step", expired, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, steps, err := checkCopy(t, tc.ctx, s, value)
			if err != tc.want || steps != 1 {
				t.Errorf("err = %v after %d steps, want %v after 1", err, steps, tc.want)
			}
		})
	}
}

// Concurrent checks of one schema each have a copy of their own: a check
// stopped by its context, or by the bound on work, leaves the others
// (and the copy it returns to the pool) as they were.
func TestConcurrentChecksOfOneSchema(t *testing.T) {
	s := mustCompile(t, treeSchema)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			ctx, value, want := t.Context(), tree(5, "item", ""), "valid"
			switch i % 4 {
			case 1:
				value, want = tree(5, "bogus", ""), "invalid"
			case 2:
				value, want = tree(24, "item", ""), ErrTooMuchWork.Error()
			case 3:
				ctx, want = cancelled, context.Canceled.Error()
			}
			vs, err := s.Check(ctx, defaultDecoder, []byte(value))
			got := "valid"
			switch {
			case err != nil:
				got = err.Error()
			case len(vs) > 0:
				got = "invalid"
			}
			if got != want {
				t.Errorf("check %d: %s, want %s", i, got, want)
			}
		})
	}
	wg.Wait()
}

func TestCheckErrors(t *testing.T) {
	s := mustCompile(t, `{"type":"object"}`)
	lim := Limits{Depth: 2}.Decoder()
	var le *LimitError
	if _, err := s.Check(t.Context(), lim, []byte(`{"a":{"b":{}}}`)); !errors.As(err, &le) || le.Limit != "depth" {
		t.Errorf("a value past the decoder's limits: err = %v, want the depth limit", err)
	}
	if _, err := s.Check(t.Context(), lim, []byte(`{"a":`)); err == nil {
		t.Errorf("invalid JSON passed")
	}
}
