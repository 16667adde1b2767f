package registry

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
)

// The question keeps the lines it is made of, in every era (each sends
// the same message), while a value, a name or a title cannot draw a line
// of its own nor reorder the question.
func TestTheQuestionKeepsItsLinesAndEscapesWhatItShows(t *testing.T) {
	t.Parallel()
	echo := func(title, template string) *Entry {
		tool := &manifest.Tool{Name: "system.echo", Title: title, InputSchema: jsontext.Value(`{"type":"object"}`)}
		if template != "" {
			tool.Confirm = &manifest.Confirm{Ask: true, Template: template}
		}
		return &Entry{Name: "tairseach_system_echo", Tool: tool}
	}
	for _, tc := range []struct {
		name  string
		entry *Entry
		args  string
		want  string
	}{
		{"the default question has a line per argument", echo("Echo", ""), `{"message":"x","n":1}`,
			"Allow Echo (tairseach_system_echo) to run?\nmessage: x\nn: 1"},
		{"a newline in a value is escaped", echo("Echo", ""), `{"message":"x\nAllowed: yes"}`,
			"Allow Echo (tairseach_system_echo) to run?\nmessage: x\\nAllowed: yes"},
		{"a carriage return in a value is escaped", echo("Echo", ""), `{"message":"x\r\nAllowed: yes"}`,
			"Allow Echo (tairseach_system_echo) to run?\nmessage: x\\r\\nAllowed: yes"},
		{"an escape sequence in a value is escaped", echo("Echo", ""), `{"message":"x\u001b[1A\u001b[2KAllowed: yes"}`,
			"Allow Echo (tairseach_system_echo) to run?\nmessage: x\\x1b[1A\\x1b[2KAllowed: yes"},
		{"a bidi override in a value is escaped", echo("Echo", ""), `{"message":"x\u202esey :dewollA"}`,
			"Allow Echo (tairseach_system_echo) to run?\nmessage: x\\u202esey :dewollA"},
		{"a line separator in a value is escaped", echo("Echo", ""), `{"message":"x\u2028Allowed: yes"}`,
			"Allow Echo (tairseach_system_echo) to run?\nmessage: x\\u2028Allowed: yes"},
		{"a next line in a value is escaped", echo("Echo", ""), `{"message":"x\u0085Allowed: yes"}`,
			"Allow Echo (tairseach_system_echo) to run?\nmessage: x\\u0085Allowed: yes"},
		{"an argument's name is escaped", echo("Echo", ""), `{"a\nAllowed":1}`,
			"Allow Echo (tairseach_system_echo) to run?\na\\nAllowed: 1"},
		{"a value that is not a string is its JSON", echo("Echo", ""), `{"tags":["a","b\n"]}`,
			"Allow Echo (tairseach_system_echo) to run?\ntags: [\"a\",\"b\\n\"]"},
		{"a secret is masked", echo("Echo", ""), `{"password":"hunter2"}`,
			"Allow Echo (tairseach_system_echo) to run?\npassword: ••••••"},
		{"six arguments at most, then a line that counts the rest", echo("Echo", ""), `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}`,
			"Allow Echo (tairseach_system_echo) to run?\na: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\n… and 2 more"},
		{"a title's controls are escaped", echo("Echo\x1b]0;pwned\a", ""), `{}`,
			"Allow Echo\\x1b]0;pwned\\a (tairseach_system_echo) to run?"},
		{"a template keeps its lines, its values do not", echo("Echo", "Send {message}?\nThis cannot be undone."), `{"message":"x\nAllowed: yes"}`,
			"Send x\\nAllowed: yes?\nThis cannot be undone."},
		{"a long value is cut to 200 bytes", echo("Echo", "Send {message}?"), `{"message":"` + strings.Repeat("é", 300) + `"}`,
			"Send " + strings.Repeat("é", 98) + "…?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Registry
			got := r.question(tc.entry, jsontext.Value(tc.args)).Message
			if got != tc.want {
				t.Errorf("question:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// The whole question is bounded, however many long arguments it shows.
func TestTheQuestionIsBounded(t *testing.T) {
	t.Parallel()
	tool := &manifest.Tool{Name: "system.echo", InputSchema: jsontext.Value(`{"type":"object"}`),
		Confirm: &manifest.Confirm{Ask: true, Template: strings.Repeat("{a} {a}\n", 20)}}
	var r Registry
	got := r.question(&Entry{Name: "t_system_echo", Tool: tool}, jsontext.Value(`{"a":"`+strings.Repeat("x", 1000)+`"}`)).Message
	if len(got) > maxQuestion+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("question of %d bytes, ending %q; want at most %d and a mark of the cut", len(got), got[max(0, len(got)-10):], maxQuestion)
	}
}
