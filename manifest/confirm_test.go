package manifest

import (
	"strings"
	"testing"
)

func TestConfirm(t *testing.T) {
	tool := func(confirm string) string {
		return `{"id":"n","tools":[{"name":"n.delete","description":"D.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}},"confirm":` +
			confirm + `}],"implementation":{"methods":{"n.delete":"n.delete"}}}`
	}
	for _, tt := range []struct {
		name, confirm string
		want          *Confirm
		problem       string // a problem's text, "" for none
	}{
		{"true", `true`, &Confirm{Ask: true}, ""},
		{"false", `false`, &Confirm{}, ""},
		{"a question", `"Delete {id}?"`, &Confirm{Ask: true, Template: "Delete {id}?"}, ""},
		{"a placeholder that names no argument", `"Delete {name}?"`, &Confirm{Ask: true, Template: "Delete {name}?"}, "{name} names no argument"},
		{"an empty question", `""`, nil, "confirm"},
		{"a number", `1`, nil, "confirm"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("n.json", []byte(tool(tt.confirm)))
			var text []string
			for _, p := range problems {
				text = append(text, p.String())
			}
			if tt.problem == "" && len(problems) > 0 || tt.problem != "" && !strings.Contains(strings.Join(text, "\n"), tt.problem) {
				t.Errorf("problems %q, want one saying %q", text, tt.problem)
			}
			if tt.want == nil {
				if m != nil && len(m.Tools) == 1 && !m.Tools[0].Broken {
					t.Errorf("a bad confirm is served: %+v", m.Tools[0].Confirm)
				}
				return
			}
			if got := m.Tools[0].Confirm; got == nil || *got != *tt.want {
				t.Errorf("confirm %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := FillTemplate("Delete {id} from {folder}, {id}?", func(name string) string { return "<" + name + ">" }); got != "Delete <id> from <folder>, <id>?" {
		t.Errorf("filled %q", got)
	}
	if got := (&Confirm{Template: "{a} {b} {a}"}).Placeholders(); strings.Join(got, ",") != "a,b" {
		t.Errorf("placeholders %q", got)
	}
}
