package audit

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// An entry's text is made a field of a record, as safetext.Field makes
// it: every unsafe character replaced by U+FFFD, bounded in bytes.
func TestEntryCleanMakesClientTextSafe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is kept", "Claude Desktop", "Claude Desktop"},
		{"control characters are replaced", "evil\x1b[2Jclient\n\r\t", "evil\uFFFD[2Jclient\uFFFD\uFFFD\uFFFD"},
		{"bidirectional controls are replaced", "abc\u202edcba", "abc\uFFFDdcba"},
		{"line and paragraph separators are replaced", "a\u2028b\u2029c", "a\uFFFDb\uFFFDc"},
		{"invalid UTF-8 is replaced, byte by byte", "bad\xff\xfeend", "bad\uFFFD\uFFFDend"},
		{"long text is cut and marked within the bound", strings.Repeat("é", 100), strings.Repeat("é", 62) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Entry{Client: tc.in, Found: []string{tc.in}, ArgKeys: []string{tc.in}}
			e.clean()
			if e.Client != tc.want {
				t.Errorf("client %q, want %q", e.Client, tc.want)
			}
			for _, s := range []string{e.Found[0], e.ArgKeys[0]} {
				if !utf8.ValidString(s) || strings.ContainsAny(s, "\x1b\n\u202e\u2028") {
					t.Errorf("a name kept as %q", s)
				}
			}
		})
	}
}

func TestEntryCleanBoundsEveryClientString(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x\x00", 1<<20)
	e := &Entry{Client: huge, ClientVersion: huge, Session: huge, Transport: huge, ProtocolVersion: huge,
		Name: huge, ManifestName: huge, Method: huge, Outcome: huge, Confirmation: huge, Answer: huge,
		ArgKeys: make([]string, 100)}
	for i := range e.ArgKeys {
		e.ArgKeys[i] = huge
	}
	e.clean()
	for name, s := range map[string]string{"client": e.Client, "client_version": e.ClientVersion, "session": e.Session,
		"transport": e.Transport, "protocol_version": e.ProtocolVersion, "outcome": e.Outcome, "confirmation": e.Confirmation, "answer": e.Answer} {
		if len(s) > maxClient || strings.ContainsRune(s, 0) {
			t.Errorf("%s: %d bytes, NUL kept: %v", name, len(s), strings.ContainsRune(s, 0))
		}
	}
	for name, s := range map[string]string{"name": e.Name, "manifest_name": e.ManifestName, "method": e.Method} {
		if len(s) > maxName {
			t.Errorf("%s: %d bytes", name, len(s))
		}
	}
	if len(e.ArgKeys) != maxKeys || len(e.ArgKeys[0]) > maxKey {
		t.Errorf("%d argument names, the first %d bytes", len(e.ArgKeys), len(e.ArgKeys[0]))
	}
}

func TestKeysIsTheShapeOfTheArguments(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	var first64 []string
	many.WriteString("{")
	for i := range 100 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
		if i < 64 {
			first64 = append(first64, fmt.Sprint("k", i))
		}
	}
	many.WriteString(`"last":2}`)
	for _, tc := range []struct {
		name, args string
		want       []string
	}{
		{"top-level names in order", `{"to":"a@b.c","subject":"hi","body":{"text":"x","secret":"y"}}`, []string{"to", "subject", "body"}},
		{"no arguments", `{}`, nil},
		{"not an object", `[1,2]`, nil},
		{"not JSON", `{"a":`, []string{"a"}},
		{"at most 64 names", many.String(), first64},
		{"duplicate names are listed as sent", `{"a":1,"a":2}`, []string{"a", "a"}},
		{"a long name is cut", `{"` + strings.Repeat("n", 100) + `":1}`, []string{strings.Repeat("n", 61) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Keys(jsontext.Value(tc.args))); diff != "" {
				t.Errorf("Keys(%s) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestValuesRedactsSecretsByName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"password", "Password", "user_password", "passwd", "passphrase", "secret", "clientSecret",
		"token", "access_token", "X-Auth-Token", "apiKey", "api_key", "API-KEY", "authorization", "Authorization",
		"credentials", "private_key", "privateKey", "cookie", "Set-Cookie"} {
		args := `{"user":"ann","` + name + `":"hunter2","nested":{"list":[{"` + name + `":{"deep":"hunter2"}}]}}`
		got, cut := Values(nil, jsontext.Value(args))
		want := `{"user":"ann","` + name + `":"[redacted]","nested":{"list":[{"` + name + `":"[redacted]"}]}}`
		if string(got) != want || cut {
			t.Errorf("Values(%s) =\n %s (cut %v), want\n %s", args, got, cut, want)
		}
	}
	for _, name := range []string{"user", "subject", "tokenize_nothing_else", "page"} {
		if SecretName(name) != strings.Contains(name, "token") {
			t.Errorf("SecretName(%q) = %v", name, SecretName(name))
		}
	}
}

func TestValuesRedactsSecretsBySchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema, args, want string
	}{
		{"format password",
			`{"type":"object","properties":{"pin":{"type":"string","format":"password"},"user":{"type":"string"}}}`,
			`{"user":"ann","pin":"1234"}`, `{"user":"ann","pin":"[redacted]"}`},
		{"writeOnly",
			`{"properties":{"pin":{"writeOnly":true}}}`,
			`{"pin":{"a":1}}`, `{"pin":"[redacted]"}`},
		{"nested properties",
			`{"properties":{"account":{"properties":{"pin":{"format":"password"}}}}}`,
			`{"account":{"pin":"1","id":7}}`, `{"account":{"pin":"[redacted]","id":7}}`},
		{"array items",
			`{"properties":{"logins":{"type":"array","items":{"properties":{"pin":{"writeOnly":true}}}}}}`,
			`{"logins":[{"pin":"1"},{"pin":"2","site":"x"}]}`, `{"logins":[{"pin":"[redacted]"},{"pin":"[redacted]","site":"x"}]}`},
		{"prefixItems, then items",
			`{"properties":{"pair":{"prefixItems":[{"type":"string"},{"format":"password"}],"items":{"writeOnly":true}}}}`,
			`{"pair":["user","pin","more"]}`, `{"pair":["user","[redacted]","[redacted]"]}`},
		{"draft-07 tuple items",
			`{"properties":{"pair":{"items":[{"type":"string"},{"format":"password"}]}}}`,
			`{"pair":["user","pin"]}`, `{"pair":["user","[redacted]"]}`},
		{"additionalProperties",
			`{"properties":{"id":{"type":"integer"}},"additionalProperties":{"writeOnly":true}}`,
			`{"id":1,"anything":"x"}`, `{"id":1,"anything":"[redacted]"}`},
		{"a local $ref",
			`{"properties":{"login":{"$ref":"#/$defs/login"}},"$defs":{"login":{"properties":{"pin":{"format":"password"}}}}}`,
			`{"login":{"pin":"1","user":"ann"}}`, `{"login":{"pin":"[redacted]","user":"ann"}}`},
		{"a draft-07 definitions $ref",
			`{"properties":{"pin":{"$ref":"#/definitions/pin"}},"definitions":{"pin":{"writeOnly":true}}}`,
			`{"pin":"1"}`, `{"pin":"[redacted]"}`},
		{"allOf, anyOf, oneOf",
			`{"allOf":[{"properties":{"a":{"writeOnly":true}}}],"anyOf":[{"properties":{"b":{"format":"password"}}}],"oneOf":[{"properties":{"c":{"writeOnly":true}}}]}`,
			`{"a":1,"b":2,"c":3,"d":4}`, `{"a":"[redacted]","b":"[redacted]","c":"[redacted]","d":4}`},
		{"a cycle of references ends",
			`{"$ref":"#","properties":{"x":{"$ref":"#"}}}`,
			`{"x":{"x":{"y":1}}}`, `{"x":{"x":{"y":1}}}`},
		{"the whole arguments",
			`{"writeOnly":true}`,
			`{"a":1}`, `"[redacted]"`},
		{"boolean schemas say nothing",
			`{"properties":{"a":true,"b":false},"additionalProperties":true}`,
			`{"a":1,"b":2,"c":3}`, `{"a":1,"b":2,"c":3}`},
		{"order, numbers and escapes are kept",
			`{}`,
			`{"z":12345678901234567890123,"a":1.50e3,"s":"tab\there"}`, `{"z":12345678901234567890123,"a":1.50e3,"s":"tab\there"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Values(jsontext.Value(tc.schema), jsontext.Value(tc.args))
			if string(got) != tc.want || cut {
				t.Errorf("Values =\n %s (cut %v), want\n %s", got, cut, tc.want)
			}
		})
	}
}

func TestValuesAreBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150) // 300 bytes
	got, cut := Values(nil, jsontext.Value(`{"body":"`+long+`","n":1}`))
	if want := `{"body":"` + strings.Repeat("é", 98) + `…","n":1}`; string(got) != want || !cut {
		t.Errorf("a long string: %s (cut %v), want %s, cut", got, cut, want)
	}
	many := "[" + strings.Repeat(`"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",`, 200) + `1]`
	if got, cut := Values(nil, jsontext.Value(`{"list":`+many+`}`)); got != nil || !cut {
		t.Errorf("values over 4 KiB: %d bytes kept (cut %v), want none", len(got), cut)
	}
	if got, cut := Values(nil, jsontext.Value(`{"a":"`+strings.Repeat("a", maxValuesIn)+`"}`)); got != nil || !cut {
		t.Errorf("arguments over 256 KiB: %d bytes kept (cut %v), want none", len(got), cut)
	}
	if got, cut := Values(nil, jsontext.Value(`{"a":`)); got != nil || !cut {
		t.Errorf("arguments that are not JSON: %q (cut %v), want none", got, cut)
	}
}
