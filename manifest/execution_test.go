package manifest

import (
	"strings"
	"testing"
)

func TestExecutionTaskSupport(t *testing.T) {
	tool := func(execution string) string {
		return `{"id":"n","tools":[{"name":"n.import","description":"I.","inputSchema":{"type":"object"}` + execution +
			`}],"implementation":{"methods":{"n.import":"n.import"}}}`
	}
	for _, tt := range []struct {
		name, execution string
		want            string // the taskSupport served; "-" for a tool not served
		problem         string // a problem's text, "" for none
	}{
		{"none said", ``, "", ""},
		{"forbidden", `,"execution":{"taskSupport":"forbidden"}`, "forbidden", ""},
		{"optional", `,"execution":{"taskSupport":"optional"}`, "optional", ""},
		{"required is served, with a warning", `,"execution":{"taskSupport":"required"}`, "required", "cannot take a task"},
		{"an empty execution", `,"execution":{}`, "", ""},
		{"an unknown value", `,"execution":{"taskSupport":"sometimes"}`, "-", "taskSupport"},
		{"not an object", `,"execution":"optional"`, "-", "execution"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, problems := Parse("n.json", []byte(tool(tt.execution)))
			var text []string
			for _, p := range problems {
				text = append(text, p.String())
			}
			if tt.problem == "" && len(problems) > 0 || tt.problem != "" && !strings.Contains(strings.Join(text, "\n"), tt.problem) {
				t.Errorf("problems %q, want one saying %q", text, tt.problem)
			}
			if m == nil || len(m.Tools) != 1 {
				t.Fatalf("manifest %+v", m)
			}
			tl := m.Tools[0]
			if tt.want == "-" {
				if !tl.Broken {
					t.Errorf("a bad execution is served: %+v", tl.Execution)
				}
				return
			}
			got := ""
			if tl.Execution != nil {
				got = tl.Execution.TaskSupport
			}
			if tl.Broken || got != tt.want {
				t.Errorf("taskSupport %q (broken %v), want %q", got, tl.Broken, tt.want)
			}
		})
	}
}
