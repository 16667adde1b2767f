package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseURITemplateRefusesWhatLevel1CannotSay(t *testing.T) {
	for _, tt := range []struct{ template, msg string }{
		{"notes/{id}", "must start with a scheme"},
		{"a:b", "has no {variable}"},
		{"a:{}", "empty {}"},
		{"a:{id", `"{" without "}"`},
		{"a:id}", `"}" without "{"`},
		{"a:{+path}", "level 2 and up"},
		{"a:{#frag}", "level 2 and up"},
		{"a:{?q}", "level 2 and up"},
		{"a:{x,y}", "level 3 and up"},
		{"a:{x:3}", "level 3 and up"},
		{"a:{x*}", "level 3 and up"},
		{"a:{x-y}", "a variable name has letters, digits and _"},
		{"a:{x..y}", "a variable name has letters, digits and _"},
		{"a:{x}/{x}", "{x} appears twice"},
		{"a:{x}{y}", "{y} follows another variable"},
		{"a:b c/{x}", "' ' cannot appear in a URI"},
		{"a:b/{x}%zz", `"%" must start a percent-encoded byte`},
	} {
		if _, err := ParseURITemplate(tt.template); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseURITemplate(%q) = %v, want an error with %q", tt.template, err, tt.msg)
		}
	}
}

func TestURITemplateMatchesItsExpansions(t *testing.T) {
	for _, tt := range []struct {
		template, uri string
		want          map[string]string // nil: no match
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/123/data/", nil},
		{"test://template/{id}/data", "test://template//data", nil},
		{"test://template/{id}/data", "test://template/1/2/data", nil},
		{"test://template/{id}/data", "test://template/a%20b%2Fc/data", map[string]string{"id": "a b/c"}},
		{"test://template/{id}/data", "test://template/a b/data", map[string]string{"id": "a b"}},
		{"test://template/{id}/data", "test://template/100%/data", nil},
		{"tairseach://contacts/{first}.{last}", "tairseach://contacts/ada.lovelace", map[string]string{"first": "ada", "last": "lovelace"}},
		{"tairseach://search?q={q}&n={n}", "tairseach://search?q=milk&n=5", map[string]string{"q": "milk", "n": "5"}},
		{"tairseach://search?q={q}", "tairseach://search?q=a#frag", nil},
		{"a:{x}", "b:{x}", nil},
	} {
		tpl, err := ParseURITemplate(tt.template)
		if err != nil {
			t.Fatalf("%s: %v", tt.template, err)
		}
		got, ok := tpl.Match(tt.uri)
		if ok != (tt.want != nil) || !cmp.Equal(got, tt.want) {
			t.Errorf("%s matching %s = %v, %v; want %v", tt.template, tt.uri, got, ok, tt.want)
		}
	}
}

func TestURITemplateExpandEncodesAllButUnreserved(t *testing.T) {
	tpl, err := ParseURITemplate("tairseach://notes/{id}?v={v}")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"id": "a/b c?é", "v": "1.0-x_y~"}
	uri := tpl.Expand(vars)
	if want := "tairseach://notes/a%2Fb%20c%3F%C3%A9?v=1.0-x_y~"; uri != want {
		t.Errorf("Expand = %s, want %s", uri, want)
	}
	if got, ok := tpl.Match(uri); !ok || !cmp.Equal(got, vars) {
		t.Errorf("the expansion does not match back: %v, %v", got, ok)
	}
	if got := tpl.String(); got != "tairseach://notes/{id}?v={v}" || !cmp.Equal(tpl.Variables(), []string{"id", "v"}) {
		t.Errorf("String %s, Variables %v", got, tpl.Variables())
	}
}

func FuzzURITemplate(f *testing.F) {
	f.Add("tairseach://notes/{id}", "x y")
	f.Add("a:{x}.{y}", "1.2")
	f.Add("a:{x}/b?c={y}", "%2F/")
	f.Fuzz(func(t *testing.T, template, value string) {
		tpl, err := ParseURITemplate(template)
		if err != nil {
			return
		}
		vars := map[string]string{}
		for _, v := range tpl.Variables() {
			vars[v] = value
		}
		// A template's expansion matches it back, unless a value is empty
		// or several variables share literal-free boundaries.
		got, ok := tpl.Match(tpl.Expand(vars))
		if value != "" && len(vars) == 1 && (!ok || !cmp.Equal(got, vars)) {
			t.Fatalf("%s expanded with %q does not match back: %v %v", template, value, got, ok)
		}
	})
}
