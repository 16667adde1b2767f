package manifest

import (
	"fmt"
	"maps"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// maxFormatLength is the longest string, in bytes, that each format's
// check accepts; a longer string fails without being looked at. Formats
// not listed are checked in time linear in the string and memory a small
// part of it, whatever its length; the schema library's own checks of
// email and hostname stop at their RFC's length. docs/reliability.md has
// the table and the reasons.
var maxFormatLength = map[string]int{
	// Compiling a regular expression costs up to 15 KiB and 20 µs a byte.
	"regex": 1000,
	// The library's check copies the units it has read once per unit:
	// quadratic in the length.
	"duration": 256,
	"period":   256,
	// The longest valid strings; the library splits on dots or fails
	// with a message that quotes the value, both as long as the string.
	"date":       len("2006-01-02"),
	"ipv4":       len("255.255.255.255"),
	"ip-address": len("255.255.255.255"),
	"ipv6":       len("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"),
	// The library splits these at every "/", 16 bytes a piece.
	"json-pointer":          64 << 10,
	"relative-json-pointer": 64 << 10,
	"uri-template":          64 << 10,
}

// formatKnown reports whether the schema library checks format f.
func formatKnown(f string) bool {
	_, ok := jsonschema.Formats[f]
	return ok
}

// checkFormat checks v against the known format f, as the schema library
// does, within maxFormatLength: only strings have formats. It returns why
// v fails, "" when it passes; the message shows the start of v only.
func checkFormat(f string, v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	if limit, ok := maxFormatLength[f]; ok && len(s) > limit {
		return fmt.Sprintf("%s is %d bytes long, longer than the %d bytes that are checked as %q", safetext.Quote(s, previewLength), len(s), limit, f)
	}
	if !jsonschema.Formats[f](v) {
		return fmt.Sprintf("%s is not valid %q", safetext.Quote(s, previewLength), f)
	}
	return ""
}

// previewLength bounds the part of a value that a message quotes
// (safetext.Quote).
const previewLength = 40

// maxPatternLength is the longest pattern, in bytes, that a schema may
// have, in pattern or as a name in patternProperties: compiling a schema,
// the library compiles each one twice, to check it against the draft's
// meta-schema and to keep it, at up to 15 KiB and 20 µs a byte.
const maxPatternLength = 4096

// checkPatterns returns an error naming a pattern longer than
// maxPatternLength in a schema decoded by a Decoder, nil when there is
// none.
func checkPatterns(schema any) error {
	var walk func(v any, path string) error
	walk = func(v any, path string) error {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				switch e := v[k]; k {
				case "const", "enum", "default", "examples":
					continue // values, not schemas
				case "pattern":
					if s, ok := e.(string); ok && len(s) > maxPatternLength {
						return fmt.Errorf("%s: a pattern of %d bytes, longer than the %d bytes that are compiled", joinPath(path, k), len(s), maxPatternLength)
					}
				case "patternProperties":
					names, _ := e.(map[string]any)
					for name := range names {
						if len(name) > maxPatternLength {
							return fmt.Errorf("%s: a pattern of %d bytes, longer than the %d bytes that are compiled", joinPath(path, k), len(name), maxPatternLength)
						}
					}
				}
				if err := walk(v[k], joinPath(path, k)); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range v {
				if err := walk(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(schema, "")
}
