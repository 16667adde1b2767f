package manifest

import (
	"reflect"
	"strings"
)

// tagNames lists the JSON names of a struct's fields, "-" excluded.
func tagNames(v any) []string {
	var out []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
