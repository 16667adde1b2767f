package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// contentManifest has a resource of each kind, a template and a prompt,
// all servable; tests add a broken one beside them.
func contentManifest(resources, templates, prompts string) string {
	return `{"id":"x","tools":[
		{"name":"status","description":"S.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
		{"name":"wipe","description":"W.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}],
	"resources":[
		{"uri":"tairseach://status","name":"status","description":"Status.","method":"backend.status","params":{ "verbose" : true }},
		{"uri":"tairseach://log","name":"log","description":"Log.","file":"log.txt","maxBytes":100,"mimeType":"text/plain"},
		{"uri":"tairseach://motd","name":"motd","description":"Motd.","text":"hello","annotations":{"audience":["user"],"priority":0.5}}` + resources + `],
	"resourceTemplates":[
		{"uriTemplate":"tairseach://notes/{id}","name":"note","description":"A note.","method":"notes.get","params":{"full":true},
		 "schema":{"type":"object","properties":{"id":{"type":"string","pattern":"^[0-9a-f]+$"}}},"complete":{"id":"notes.complete"}}` + templates + `],
	"prompts":[
		{"name":"review","description":"Review a note.","arguments":[{"name":"id","required":true},{"name":"tone"}],
		 "messages":[{"role":"user","text":"Review note {id} in a {tone} tone."},{"role":"user","resource":"tairseach://notes/{id}"}],
		 "complete":{"id":"notes.complete"}}` + prompts + `],
	"implementation":{"methods":{"status":"backend.status","wipe":"notes.wipe","get":"notes.get","complete":"notes.complete"}}}`
}

func TestContentIsDecoded(t *testing.T) {
	m, problems := Parse("f.json", []byte(contentManifest("", "", "")))
	var errs []string
	for _, p := range problems {
		errs = append(errs, p.String())
	}
	// get and complete map no tool, but a template and completions call
	// their methods.
	if len(errs) > 0 {
		t.Fatalf("problems:\n%s", strings.Join(errs, "\n"))
	}
	if len(m.Resources) != 3 || len(m.ResourceTemplates) != 1 || len(m.Prompts) != 1 {
		t.Fatalf("decoded %d resources, %d templates, %d prompts", len(m.Resources), len(m.ResourceTemplates), len(m.Prompts))
	}
	status, log, motd := m.Resources[0], m.Resources[1], m.Resources[2]
	if status.Method != "backend.status" || string(status.Params) != `{"verbose":true}` || status.Path() != "resources[0]" {
		t.Errorf("status = %+v params %s", status, status.Params)
	}
	if log.File != "log.txt" || log.MaxBytes != 100 || log.MIMEType != "text/plain" || log.Text != nil {
		t.Errorf("log = %+v", log)
	}
	if motd.Text == nil || *motd.Text != "hello" || motd.Annotations == nil || *motd.Annotations.Priority != 0.5 || motd.Annotations.Audience[0] != "user" {
		t.Errorf("motd = %+v", motd)
	}
	tpl := m.ResourceTemplates[0]
	if tpl.Template == nil || !cmp.Equal(tpl.Template.Variables(), []string{"id"}) || tpl.Complete["id"] != "notes.complete" || string(tpl.Params) != `{"full":true}` {
		t.Errorf("template = %+v", tpl)
	}
	if s, err := CompileTemplateSchema(tpl); s == nil || err != nil {
		t.Errorf("template schema: %v", err)
	}
	pr := m.Prompts[0]
	if len(pr.Arguments) != 2 || !pr.Arguments[0].Required || len(pr.Messages) != 2 || pr.Messages[1].Resource != "tairseach://notes/{id}" {
		t.Errorf("prompt = %+v", pr)
	}
	if got := pr.Fill(*pr.Messages[0].Text, map[string]string{"id": "7"}); got != "Review note 7 in a  tone." {
		t.Errorf("Fill = %q", got)
	}
}

// Each broken item is reported where it is and keeps only itself from
// being served: the manifest's other items are served.
func TestBrokenContentIsReportedWhereItIs(t *testing.T) {
	for _, tt := range []struct {
		name                          string
		resources, templates, prompts string
		path, msg                     string
		warning                       bool
	}{
		{name: "a resource without a source", resources: `,{"uri":"a:b","name":"n"}`,
			path: "resources[3]", msg: "exactly one of method, file and text; it has none"},
		{name: "a resource with two sources", resources: `,{"uri":"a:b","name":"n","file":"f","text":"t"}`,
			path: "resources[3]", msg: "it has file and text"},
		{name: "params without a method", resources: `,{"uri":"a:b","name":"n","text":"t","params":{}}`,
			path: "resources[3].params", msg: "params are sent with a method"},
		{name: "maxBytes without a file", resources: `,{"uri":"a:b","name":"n","text":"t","maxBytes":5}`,
			path: "resources[3].maxBytes", msg: "maxBytes bounds a file"},
		{name: "a URI without a scheme", resources: `,{"uri":"status","name":"n","text":"t"}`,
			path: "resources[3].uri", msg: "does not match pattern"},
		{name: "a URI with a variable", resources: `,{"uri":"a:{b}","name":"n","text":"t"}`,
			path: "resources[3].uri", msg: "belongs in resourceTemplates"},
		{name: "a URI with a space", resources: `,{"uri":"a:b c","name":"n","text":"t"}`,
			path: "resources[3].uri", msg: `' ' cannot appear in a URI`},
		{name: "a URI twice", resources: `,{"uri":"tairseach://motd","name":"n","text":"t"}`,
			path: "resources[3].uri", msg: `duplicate resource URI "tairseach://motd" (first declared at resources[2])`},
		{name: "a method not in implementation.methods", resources: `,{"uri":"a:b","name":"n","method":"secrets.dump"}`,
			path: "resources[3].method", msg: `method "secrets.dump" is not one of implementation.methods`},
		{name: "a destructive tool's method", resources: `,{"uri":"a:b","name":"n","method":"notes.wipe"}`,
			path: "resources[3].method", msg: `tool "wipe", marked destructiveHint: true`},
		{name: "a priority past 1", resources: `,{"uri":"a:b","name":"n","text":"t","annotations":{"priority":2}}`,
			path: "resources[3].annotations.priority", msg: "must be <= 1"},
		{name: "a template of level 2", templates: `,{"uriTemplate":"a:{+path}","name":"n","method":"notes.get"}`,
			path: "resourceTemplates[1].uriTemplate", msg: "level 2 and up"},
		{name: "a template without a variable", templates: `,{"uriTemplate":"a:b","name":"n","method":"notes.get"}`,
			path: "resourceTemplates[1].uriTemplate", msg: "has no {variable}"},
		{name: "a template twice", templates: `,{"uriTemplate":"tairseach://notes/{id}","name":"n","method":"notes.get"}`,
			path: "resourceTemplates[1].uriTemplate", msg: "duplicate uriTemplate"},
		{name: "a variable that is also a fixed param", templates: `,{"uriTemplate":"a:{id}","name":"n","method":"notes.get","params":{"id":1}}`,
			path: "resourceTemplates[1].params.id", msg: "both a fixed param and a variable"},
		{name: "a completion of no variable", templates: `,{"uriTemplate":"a:{id}","name":"n","method":"notes.get","complete":{"x":"notes.complete"}}`,
			path: "resourceTemplates[1].complete.x", msg: `"x" is not a variable of the template (it has id)`},
		{name: "a completion method not allowed", templates: `,{"uriTemplate":"a:{id}","name":"n","method":"notes.get","complete":{"id":"other"}}`,
			path: "resourceTemplates[1].complete.id", msg: `method "other" is not one of implementation.methods`},
		{name: "a template schema that does not compile", templates: `,{"uriTemplate":"a:{id}","name":"n","method":"notes.get","schema":{"type":"object","properties":{"id":{"type":"strung"}}}}`,
			path: "resourceTemplates[1].schema", msg: "schema does not compile"},
		{name: "a template schema that is not an object schema", templates: `,{"uriTemplate":"a:{id}","name":"n","method":"notes.get","schema":{"type":"string"}}`,
			path: "resourceTemplates[1].schema.type", msg: `the schema's root must have "type": "object"`},
		{name: "a prompt twice", prompts: `,{"name":"review","messages":[{"role":"user","text":"t"}]}`,
			path: "prompts[1].name", msg: `duplicate prompt name "review"`},
		{name: "a prompt without messages", prompts: `,{"name":"p","messages":[]}`,
			path: "prompts[1].messages", msg: "minimum 1 items"},
		{name: "an argument twice", prompts: `,{"name":"p","arguments":[{"name":"a"},{"name":"a"}],"messages":[{"role":"user","text":"t"}]}`,
			path: "prompts[1].arguments[1].name", msg: `argument "a" is declared twice`},
		{name: "a message with text and a resource", prompts: `,{"name":"p","messages":[{"role":"user","text":"t","resource":"a:b"}]}`,
			path: "prompts[1].messages[0]", msg: "exactly one of text and resource"},
		{name: "a message of another role", prompts: `,{"name":"p","messages":[{"role":"system","text":"t"}]}`,
			path: "prompts[1].messages[0].role", msg: "value must be one of"},
		{name: "a resource placeholder naming no argument", prompts: `,{"name":"p","messages":[{"role":"user","resource":"a:{x}"}]}`,
			path: "prompts[1].messages[0].resource", msg: "{x} names no argument"},
		{name: "an embedded URI without a scheme", prompts: `,{"name":"p","arguments":[{"name":"x"}],"messages":[{"role":"user","resource":"notes/{x}"}]}`,
			path: "prompts[1].messages[0].resource", msg: "must start with a scheme"},
		{name: "a completion of no argument", prompts: `,{"name":"p","messages":[{"role":"user","text":"t"}],"complete":{"x":"notes.complete"}}`,
			path: "prompts[1].complete.x", msg: `"x" is not an argument of the prompt`},
		{name: "a text placeholder naming no argument", prompts: `,{"name":"p","description":"P.","messages":[{"role":"user","text":"say {hello}"}]}`,
			path: "prompts[1].messages[0].text", msg: "{hello} names no argument of the prompt; it is sent as it is", warning: true},
		{name: "an empty description", prompts: `,{"name":"p","messages":[{"role":"user","text":"t"}]}`,
			path: "prompts[1].description", msg: "empty description", warning: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("f.json", []byte(contentManifest(tt.resources, tt.templates, tt.prompts)))
			if m == nil {
				t.Fatalf("the file is not served:\n%s", joinProblems(problems))
			}
			var found []Problem
			for _, p := range problems {
				if p.Path == tt.path && strings.Contains(p.Message, tt.msg) {
					found = append(found, p)
				}
			}
			if len(found) != 1 || (found[0].Severity == Warning) != tt.warning {
				t.Fatalf("want one %s at %s with %q; problems:\n%s", map[bool]string{true: "warning", false: "error"}[tt.warning], tt.path, tt.msg, joinProblems(problems))
			}
			var broken []string
			for _, r := range m.Resources {
				if r.Broken {
					broken = append(broken, r.Path())
				}
			}
			for _, r := range m.ResourceTemplates {
				if r.Broken {
					broken = append(broken, r.Path())
				}
			}
			for _, r := range m.Prompts {
				if r.Broken {
					broken = append(broken, r.Path())
				}
			}
			var want []string
			if !tt.warning {
				want = []string{tt.path[:strings.IndexByte(tt.path, ']')+1]}
			}
			if !cmp.Equal(broken, want) {
				t.Errorf("broken: %v, want %v", broken, want)
			}
			// The problem names what it is about.
			if p := found[0]; strings.HasPrefix(tt.path, "prompts") && (p.Prompt == "" || p.Resource != "") ||
				!strings.HasPrefix(tt.path, "prompts") && (p.Resource == "" || p.Prompt != "") {
				t.Errorf("problem %+v", p)
			}
		})
	}
}

func TestAMappingOnlyContentCallsIsNoWarning(t *testing.T) {
	const data = `{"id":"x","tools":[],"resources":[{"uri":"a:b","name":"b","description":"B.","method":"m.read"}],
		"implementation":{"methods":{"read":"m.read","typo":"m.other"}}}`
	_, problems := Parse("f.json", []byte(data))
	want := []string{`f.json:implementation.methods.typo: warning: method mapping for "typo", but no tool has that name and no resource, template or completion calls its method`}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

func TestRepeatedNamesInContentAreErrors(t *testing.T) {
	for _, tt := range []struct{ name, data, path string }{
		{"the resources", `{"id":"x","tools":[],"resources":[],"resources":[]}`, "resources"},
		{"a resource's uri", `{"id":"x","tools":[],"resources":[{"uri":"a:b","uri":"a:c","name":"n","text":""}]}`, "resources[0].uri"},
		{"a prompt's messages", `{"id":"x","tools":[],"prompts":[{"name":"p","messages":[],"messages":[{"role":"user","text":""}]}]}`, "prompts[0].messages"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := Parse("f.json", []byte(tt.data))
			if !hasErrorAt(problems, tt.path) || !strings.Contains(joinProblems(problems), "appears twice") {
				t.Errorf("no error at %s:\n%s", tt.path, joinProblems(problems))
			}
		})
	}
}

func TestReadTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	if err := os.WriteFile(path, []byte("line one\nline two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		limit int64
		want  string
	}{{100, "line one\nline two\n"}, {18, "line one\nline two\n"}, {9, "line two\n"}, {1, "\n"}} {
		data, size, err := ReadTail(path, tt.limit)
		if err != nil || string(data) != tt.want || size != 18 {
			t.Errorf("ReadTail(%d) = %q, %d, %v; want %q, 18", tt.limit, data, size, err, tt.want)
		}
	}
	if _, _, err := ReadTail(dir, 10); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "(folder)") {
		t.Errorf("a folder: %v", err)
	}
}
