package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
)

// bind decodes a request's params into a new T, a struct whose fields
// carry json tags. params must be an object (or absent); a member that T
// does not declare, or a member of the wrong JSON type (null included),
// is a -32602 error naming the member. Use pointer fields to tell a
// missing member from a zero value.
func bind[T any](params json.RawMessage) (*T, error) {
	p := new(T)
	if params == nil {
		return p, nil
	}
	if params[0] != '{' {
		return nil, invalidParams("params must be an object")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(params, &members); err != nil {
		return nil, invalidParams("params must be an object")
	}

	v := reflect.ValueOf(p).Elem()
	fields := make(map[string]int, v.NumField())
	var names []string
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		fields[name] = i
		names = append(names, name)
	}
	for _, name := range slices.Sorted(maps.Keys(members)) {
		i, ok := fields[name]
		if !ok {
			if len(names) == 0 {
				return nil, invalidParams("unknown parameter %q: this method takes no parameters", name)
			}
			return nil, invalidParams("unknown parameter %q (known: %s)", name, strings.Join(names, ", "))
		}
		raw := members[name]
		f := v.Field(i)
		if bytes.Equal(raw, nullID) || json.Unmarshal(raw, f.Addr().Interface()) != nil {
			return nil, invalidParams("%s must be %s", name, jsonType(f.Type()))
		}
	}
	return p, nil
}

// jsonType names the JSON type a parameter field accepts, for messages.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[integer]():
		return "an integer"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "a boolean"
	}
	return "a " + t.Kind().String()
}

// integer is a parameter that accepts any JSON number with an integral
// value (1, 1.0, 1e3), as JSON Schema's "integer" does, up to ±2^53.
type integer int64

func (n *integer) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return fmt.Errorf("%s is not an integer", b)
	}
	*n = integer(f)
	return nil
}

// required returns the value of a required parameter, or -32602 naming it.
func required[T any](p *T, name string) (T, error) {
	if p == nil {
		var zero T
		return zero, invalidParams("%s is required", name)
	}
	return *p, nil
}
