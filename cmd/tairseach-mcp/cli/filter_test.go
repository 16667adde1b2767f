package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestFilterAndModeSettings(t *testing.T) {
	for _, tt := range []struct {
		name string
		vars map[string]string
		args []string
		ok   func(o *options) bool
	}{
		{"defaults serve every tool", nil, nil, func(o *options) bool {
			return o.include == nil && o.exclude == nil && !o.readOnly && o.toolMode == "all" && o.searchLearn
		}},
		{"search mode's learning turns off", map[string]string{"TAIRSEACH_SEARCH_LEARN": "false"}, nil, func(o *options) bool { return !o.searchLearn }},
		{"--search-learn=false turns it off", nil, []string{"--search-learn=false"}, func(o *options) bool { return !o.searchLearn }},
		{"flags repeat", nil, []string{"--include", "mail.*", "--include", "notes.*", "--exclude", "*.delete"}, func(o *options) bool {
			return slices.Equal(o.include, []string{"mail.*", "notes.*"}) && slices.Equal(o.exclude, []string{"*.delete"})
		}},
		{"variables take comma-separated lists", map[string]string{"TAIRSEACH_INCLUDE": "mail.*, notes.*", "TAIRSEACH_EXCLUDE": "*.delete,*.send", "TAIRSEACH_READ_ONLY": "yes", "TAIRSEACH_TOOL_MODE": "search"}, nil, func(o *options) bool {
			return slices.Equal(o.include, []string{"mail.*", "notes.*"}) && slices.Equal(o.exclude, []string{"*.delete", "*.send"}) && o.readOnly && o.toolMode == "search"
		}},
		{"a flag wins over its variable", map[string]string{"TAIRSEACH_EXCLUDE": "a", "TAIRSEACH_TOOL_MODE": "search"}, []string{"--exclude", "b", "--tool-mode", "all"}, func(o *options) bool {
			return slices.Equal(o.exclude, []string{"b"}) && o.toolMode == "all"
		}},
	} {
		o, err := parse(t, tt.vars, tt.args...)
		if err != nil || !tt.ok(o) {
			t.Errorf("%s: %+v, %v", tt.name, o, err)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tool-mode", "some"}, `unknown tool mode "some": use all or search`},
		{[]string{"--exclude", "mail.[a"}, `bad pattern "mail.[a"`},
	} {
		e, _, errb := testEnv(nil)
		if code := run(context.Background(), e, tt.args); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errb, tt.want)
		}
	}
}

func TestToolsAndValidateShowWhatTheFiltersLeave(t *testing.T) {
	e, out, _ := testEnv(map[string]string{"TAIRSEACH_READ_ONLY": "1"})
	if code := run(context.Background(), e, []string{"tools", "--manifests", "../../../manifests-example", "--exclude", "tairseach_system_*"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"tairseach_notes_list",
		"NOT SERVED",
		"notes.create   filtered out as not read-only: its annotations do not say readOnlyHint: true",
		`system.info    filtered out by the exclude pattern "tairseach_system_*"`,
		"files.reindex  hidden by mcpExpose: false",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tools output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), "tairseach_notes_create") {
		t.Errorf("tools lists a filtered-out tool:\n%s", out)
	}
	e, out, _ = testEnv(nil)
	if code := run(context.Background(), e, []string{"validate", "--read-only", "--strict", "../../../manifests-example"}); code != exitOK {
		t.Errorf("validate --strict on the examples: exit %d\n%s", code, out)
	}
	want := "7 tools renamed for clients (names must match ^[a-zA-Z0-9_-]{1,64}$); --verbose lists them\n" +
		"2 prompts renamed for clients, as tools are; --verbose lists them\n" +
		"3 tools filtered out by --include, --exclude or --read-only; --verbose lists them\n" +
		"8 tools, 2 resources, 1 resource template and 2 prompts served; 0 errors, 0 warnings\n"
	if out.String() != want {
		t.Errorf("validate output:\n%s\nwant:\n%s", out, want)
	}
}
