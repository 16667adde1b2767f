package manifest

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// URITemplate is an RFC 6570 level 1 URI template: literal text and
// {name} variables, each expanded as a string with every character
// outside the unreserved set percent-encoded. It is safe for concurrent
// use.
type URITemplate struct {
	raw  string
	vars []string
	re   *regexp.Regexp
}

// varName is an RFC 6570 variable name without percent-encoded
// characters: letters, digits and _, with single dots between them.
var varName = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`)

// scheme is the start of an absolute URI: its scheme and colon.
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// ParseURITemplate parses an RFC 6570 level 1 template of an absolute URI
// with at least one variable. Anything a level 1 template cannot say
// unambiguously is refused: operators and modifiers (levels 2 to 4), a
// variable used twice, two variables with nothing between them (which
// value ends where?), and characters a URI cannot hold.
func ParseURITemplate(s string) (*URITemplate, error) {
	if !scheme.MatchString(s) {
		return nil, errors.New("must start with a scheme, as in tairseach://status")
	}
	t := &URITemplate{raw: s}
	var pattern strings.Builder
	pattern.WriteString("^")
	lastWasVar := false
	for rest := s; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			open = len(rest)
		}
		if lit := rest[:open]; lit != "" {
			if err := checkLiteral(lit); err != nil {
				return nil, err
			}
			pattern.WriteString(regexp.QuoteMeta(lit))
			lastWasVar = false
		}
		rest = rest[open:]
		if rest == "" {
			break
		}
		if rest[0] == '}' {
			return nil, errors.New(`"}" without "{"`)
		}
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return nil, errors.New(`"{" without "}"`)
		}
		expr := rest[1:end]
		rest = rest[end+1:]
		switch {
		case expr == "":
			return nil, errors.New("empty {}")
		case strings.ContainsAny(expr[:1], "+#./;?&=,!@|"):
			return nil, fmt.Errorf("{%s}: operators such as %q are RFC 6570 level 2 and up; only plain {name} variables are supported", expr, expr[:1])
		case strings.ContainsAny(expr, ",:*"):
			return nil, fmt.Errorf("{%s}: lists of variables and modifiers are RFC 6570 level 3 and up; only plain {name} variables are supported", expr)
		case !varName.MatchString(expr):
			return nil, fmt.Errorf("{%s}: a variable name has letters, digits and _ (and dots between them)", expr)
		case slices.Contains(t.vars, expr):
			return nil, fmt.Errorf("{%s} appears twice", expr)
		case lastWasVar:
			return nil, fmt.Errorf("{%s} follows another variable with nothing between them, so where one ends is unknown", expr)
		}
		t.vars = append(t.vars, expr)
		// A level 1 value is percent-encoded, so it holds none of / ? #:
		// anything else up to the next literal is the value, also when
		// a client did not encode it.
		pattern.WriteString(`([^/?#]+)`)
		lastWasVar = true
	}
	if len(t.vars) == 0 {
		return nil, errors.New("has no {variable}; a URI without one is a resource, not a template")
	}
	pattern.WriteString("$")
	t.re = regexp.MustCompile(pattern.String())
	return t, nil
}

// checkLiteral refuses literal text that a URI cannot hold: white space,
// control characters, invalid UTF-8 and the characters RFC 6570 excludes
// from literals. A % must start a percent-encoded byte.
func checkLiteral(lit string) error {
	if !utf8.ValidString(lit) {
		return errors.New("invalid UTF-8")
	}
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c <= ' ' || c == 0x7f || strings.IndexByte(`"'<>\^`+"`"+`|`, c) >= 0:
			return fmt.Errorf("%q cannot appear in a URI", c)
		case c == '%' && (i+2 >= len(lit) || !isHex(lit[i+1]) || !isHex(lit[i+2])):
			return errors.New(`"%" must start a percent-encoded byte, such as %20`)
		}
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// String returns the template as written.
func (t *URITemplate) String() string { return t.raw }

// Variables returns the names of the template's variables, in order; the
// caller must not modify the slice.
func (t *URITemplate) Variables() []string { return t.vars }

// Match reports whether uri is an expansion of the template and returns
// the value of each variable, percent-decoded. A value is never empty.
func (t *URITemplate) Match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			return nil, false
		}
		vars[name] = v
	}
	return vars, true
}

// Expand returns the URI the template names for vars: each variable
// replaced by its value, percent-encoded except for unreserved
// characters, as RFC 6570 level 1 does (a missing value is empty).
func (t *URITemplate) Expand(vars map[string]string) string {
	var b strings.Builder
	rest := t.raw
	for _, name := range t.vars {
		i := strings.Index(rest, "{"+name+"}")
		b.WriteString(rest[:i])
		b.WriteString(escapeUnreserved(vars[name]))
		rest = rest[i+len(name)+2:]
	}
	b.WriteString(rest)
	return b.String()
}

// escapeUnreserved percent-encodes every byte of s but the unreserved
// characters of RFC 3986: letters, digits, - . _ ~.
func escapeUnreserved(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
