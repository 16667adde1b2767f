package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

const examples = "../../../manifests-example"

func TestResourcesAndPromptsListWhatWouldBeServed(t *testing.T) {
	e, out, errb := testEnv(nil)
	if code := run(context.Background(), e, []string{"resources", "--manifests", examples}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{
		"tairseach://system/status    status     method backend.status",
		"tairseach://examples/readme  README.md  file ../README.md (its last 64 KiB)",
		"tairseach://notes/{id}       note       method notes.get (completes id)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("resources output lacks %q:\n%s", want, out)
		}
	}
	if want := "2 resources and 1 template from " + examples + "\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb, want)
	}

	// Filters apply: the status resource's method is a read-only tool's;
	// the excluded template takes the review prompt, which embeds it.
	e, out, _ = testEnv(nil)
	run(context.Background(), e, []string{"prompts", "--read-only", "--exclude", "tairseach://notes/*", "--manifests", examples})
	for _, want := range []string{
		"tairseach_notes_summarize  topic*",
		"NOT SERVED",
		"notes.review  embeds tairseach://notes/{id}, which clients cannot read",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("prompts output lacks %q:\n%s", want, out)
		}
	}

	e, out, _ = testEnv(nil)
	run(context.Background(), e, []string{"prompts", "--json", "--manifests", examples})
	var prompts []promptInfo
	if err := json.Unmarshal(out.Bytes(), &prompts); err != nil || len(prompts) != 2 {
		t.Fatalf("prompts --json: %v\n%s", err, out)
	}
	if p := prompts[0]; p.Name != "tairseach_notes_review" || p.ManifestName != "notes.review" || !p.Arguments[0].Required || p.Complete["id"] != "notes.complete" {
		t.Errorf("prompts --json: %+v", p)
	}
	e, out, _ = testEnv(nil)
	run(context.Background(), e, []string{"resources", "--json", "--manifests", examples})
	var resources []resourceInfo
	if err := json.Unmarshal(out.Bytes(), &resources); err != nil || len(resources) != 3 || resources[2].URITemplate != "tairseach://notes/{id}" {
		t.Errorf("resources --json: %v\n%s", err, out)
	}
}

// backendWith is a fake backend answering the example manifests' methods
// read and prompt call.
func backendWith(t *testing.T) string {
	return sockettest.NewServer(t, func(_ context.Context, req sockettest.Request) (any, error) {
		switch req.Method {
		case "backend.status":
			return map[string]any{"status": "ok"}, nil
		case "notes.get":
			var p struct{ ID string }
			_ = json.Unmarshal(req.Params, &p)
			return map[string]any{"id": p.ID, "title": "groceries", "body": "line one\nline two"}, nil
		}
		return nil, &sockettest.Error{Code: -32601, Message: "no method"}
	}).Path
}

func TestReadPrintsWhatAClientWouldRead(t *testing.T) {
	sock := backendWith(t)
	for _, tt := range []struct {
		args        []string
		code        int
		out, stderr string
	}{
		{[]string{"tairseach://system/status"}, exitOK, "{\n  \"status\": \"ok\"\n}\n", ""},
		{[]string{"tairseach://notes/3f"}, exitOK, `"body": "line one\nline two",`, ""},
		{[]string{"--json", "tairseach://notes/3f"}, exitOK, `"mimeType": "application/json",`, ""},
		{[]string{"tairseach://examples/readme"}, exitOK, "# Example manifests\n", ""},
		{[]string{"tairseach://notes/3F"}, exitError, "", "the URI does not fit tairseach://notes/{id}; nothing was sent to the backend:\n- variables.id: does not match pattern"},
		{[]string{"tairseach://system/stat"}, exitError, "", "resource not found: tairseach://system/stat (did you mean tairseach://system/status?)"},
		{[]string{"--read-only", "--exclude", "status", "tairseach://system/status"}, exitError, "", "resource not found"},
	} {
		e, out, errb := testEnv(nil)
		code := run(context.Background(), e, append([]string{"read", "--manifests", examples, "--socket", sock}, tt.args...))
		if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("read %v: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, %q, %q", tt.args, code, out, errb, tt.code, tt.out, tt.stderr)
		}
	}
}

// Binary contents go to stdout as they are when it is not a terminal.
func TestReadWritesBinaryContentsAsTheyAre(t *testing.T) {
	dir := t.TempDir()
	png := "\x89PNG\r\n\x1a\n\x00\x01"
	os.WriteFile(filepath.Join(dir, "pixel.png"), []byte(png), 0o644)
	os.WriteFile(filepath.Join(dir, "m.json"), []byte(`{"id":"m","tools":[],"resources":[{"uri":"t:pixel","name":"pixel","description":"P.","file":"pixel.png","mimeType":"image/png"}]}`), 0o644)
	e, out, errb := testEnv(nil)
	if code := run(context.Background(), e, []string{"read", "--manifests", dir, "t:pixel"}); code != exitOK || out.String() != png {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, errb)
	}
}

func TestPromptFillsInWhatAClientWouldGet(t *testing.T) {
	sock := backendWith(t)
	for _, tt := range []struct {
		args        []string
		stdin       string
		code        int
		out, stderr string
	}{
		{[]string{"notes.review", "id=3f"}, "", exitOK, "user: Please review my note 3f, attached below.", ""},
		{[]string{"tairseach_notes_review", `{"id":"3f"}`}, "", exitOK, "user: [resource tairseach://notes/3f, application/json]\n{\"body\":\"line one\\nline two\"", ""},
		{[]string{"notes_summarize", "-"}, `{"topic":"milk"}`, exitOK, `Find my notes about "milk"`, ""},
		{[]string{"--json", "notes.summarize", "topic=milk"}, "", exitOK, `"role": "user"`, ""},
		{[]string{"notes.review"}, "", exitError, "", `prompt tairseach_notes_review needs argument "id"`},
		{[]string{"notes.review", "id=zz"}, "", exitError, "", "prompt tairseach_notes_review embeds tairseach://notes/zz: the URI does not fit"},
		{[]string{"notes.review", "id=3f", "mood=kind"}, "", exitError, "", `has no argument "mood" (it has id)`},
		{[]string{"notes.reveiw"}, "", exitError, "", `unknown prompt "notes.reveiw" (did you mean notes.review?)`},
		{[]string{"notes.review", "id"}, "", exitUsage, "", `argument "id" is not name=value`},
		{[]string{"notes.review", `{"id":3}`}, "", exitUsage, "", "arguments must be a JSON object of strings"},
	} {
		e, out, errb := testEnv(nil)
		e.stdin = strings.NewReader(tt.stdin)
		code := run(context.Background(), e, append([]string{"prompt", "--manifests", examples, "--socket", sock}, tt.args...))
		if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("prompt %v: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, %q, %q", tt.args, code, out, errb, tt.code, tt.out, tt.stderr)
		}
	}
}

// read and prompt record what they fetch in the audit log, as call does.
func TestReadAndPromptAreAudited(t *testing.T) {
	sock := backendWith(t)
	log := filepath.Join(t.TempDir(), "audit.log")
	for _, args := range [][]string{{"read", "tairseach://notes/3f"}, {"prompt", "notes.summarize", "topic=milk"}} {
		e, _, errb := testEnv(nil)
		if code := run(context.Background(), e, append([]string{"--manifests", examples, "--socket", sock, "--audit-log", log}, args...)); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb)
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var entry struct{ Kind, Name, Transport, Client, Outcome string }
		if err := json.Unmarshal([]byte(l), &entry); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if entry.Transport != "cli" || entry.Outcome != "ok" || !strings.HasPrefix(entry.Client, "tairseach-mcp ") {
			t.Errorf("entry %+v", entry)
		}
		kinds = append(kinds, entry.Kind+" "+entry.Name)
	}
	if want := "resource tairseach://notes/3f,prompt tairseach_notes_summarize"; strings.Join(kinds, ",") != want {
		t.Errorf("entries %v, want %s", kinds, want)
	}
}
