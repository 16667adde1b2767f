package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

func line(t *testing.T, e Entry) string {
	t.Helper()
	b, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func code(c int64) *int64 { return &c }

// testLog writes a log and two rotated files with calls of three tools
// by two clients, and lines that are not entries.
func testLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	at := func(minute int) string {
		return Timestamp(time.Date(2025, 6, 1, 10, minute, 0, 0, time.UTC))
	}
	send := func(minute int, outcome string, dur float64) Entry {
		return Entry{Time: at(minute), Kind: KindTool, Name: "t_mail_send", ManifestName: "mail.send", Principal: "process", Client: "claude-ai", ClientVersion: "0.9",
			Outcome: outcome, Duration: dur, BytesIn: 100, BytesOut: 10}
	}
	files := map[string]string{
		path + ".2": line(t, send(0, OutcomeOK, 10)) + line(t, send(1, OutcomeOK, 20)),
		path + ".1": line(t, send(2, "timeout", 50000)) +
			"not json at all\n" +
			`{"some":"other JSON"}` + "\n" +
			line(t, Entry{Time: at(3), Kind: KindDropped, Dropped: 7}) +
			line(t, Entry{Time: at(4), Kind: KindTool, Name: "t_mail_list", ManifestName: "mail.list", Principal: "client:cursor", Client: "cursor", ClientVersion: "1.2",
				Outcome: "backend_error", Code: code(-32011), Duration: 5, BytesIn: 2, BytesOut: 300}),
		path: line(t, send(5, OutcomeOK, 30)) +
			line(t, Entry{Time: at(6), Kind: KindTool, Name: "t_mail_list", ManifestName: "mail.list", Principal: "client:cursor", Client: "cursor", ClientVersion: "1.3",
				Outcome: OutcomeOK, Duration: 7, BytesIn: 2, BytesOut: 500}) +
			line(t, Entry{Time: "2025-06-01T12:07:00+02:00", Kind: KindTool, Name: "t_mail_delete", ManifestName: "mail.delete", Principal: "client:claude", Client: "claude-ai",
				Outcome: "declined", Confirmation: "elicitation", Answer: "decline", Duration: 4000}) +
			`{"time":"2025-06-01T10:08:00.000Z","kind":"tool","na`, // being written
		path + ".lock":  "",
		path + ".1.bak": "ignored\n",
		path + ".01":    "ignored\n",
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestFilesAreTheRotatedOnesOldestFirstThenTheLog(t *testing.T) {
	t.Parallel()
	path := testLog(t)
	files, err := Files(path)
	if want := []string{path + ".2", path + ".1", path}; err != nil || !cmp.Equal(files, want) {
		t.Errorf("Files = %q, %v; want %q", files, err, want)
	}
	if _, err := Files(filepath.Join(t.TempDir(), "audit.log")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Files of no log: %v, want ErrNotExist", err)
	}
}

func TestSummarizeCountsEveryCallOfEveryFile(t *testing.T) {
	t.Parallel()
	path := testLog(t)
	s, err := Summarize(t.Context(), path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Summary{
		Files: []string{path + ".2", path + ".1", path},
		First: "2025-06-01T10:00:00.000Z", Last: "2025-06-01T10:07:00.000Z",
		Calls: 7, Errors: 3,
		Tools: []Row{
			{Kind: KindTool, Name: "t_mail_send", Calls: 4, Errors: []ErrorCount{{Outcome: "timeout", Count: 1}},
				P50: 20, P95: 50000, Max: 50000, BytesIn: 400, BytesOut: 40, LastUse: "2025-06-01T10:05:00.000Z"},
			{Kind: KindTool, Name: "t_mail_list", Calls: 2, Errors: []ErrorCount{{Outcome: "backend_error", Code: code(-32011), Count: 1}},
				P50: 5, P95: 7, Max: 7, BytesIn: 4, BytesOut: 800, LastUse: "2025-06-01T10:06:00.000Z"},
			{Kind: KindTool, Name: "t_mail_delete", Calls: 1, Errors: []ErrorCount{{Outcome: "declined", Count: 1}}, Asked: 1, Refused: 1,
				P50: 4000, P95: 4000, Max: 4000, LastUse: "2025-06-01T10:07:00.000Z"},
		},
		Clients: []Row{
			{Name: "claude-ai", Versions: []string{"0.9"}, Calls: 5, Errors: []ErrorCount{{Outcome: "declined", Count: 1}, {Outcome: "timeout", Count: 1}},
				Asked: 1, Refused: 1, P50: 30, P95: 50000, Max: 50000, BytesIn: 400, BytesOut: 40, LastUse: "2025-06-01T10:07:00.000Z"},
			{Name: "cursor", Versions: []string{"1.2", "1.3"}, Calls: 2, Errors: []ErrorCount{{Outcome: "backend_error", Code: code(-32011), Count: 1}},
				P50: 5, P95: 7, Max: 7, BytesIn: 4, BytesOut: 800, LastUse: "2025-06-01T10:06:00.000Z"},
		},
		Principals: []Row{
			{Name: "process", Calls: 4, Errors: []ErrorCount{{Outcome: "timeout", Count: 1}},
				P50: 20, P95: 50000, Max: 50000, BytesIn: 400, BytesOut: 40, LastUse: "2025-06-01T10:05:00.000Z"},
			{Name: "client:cursor", Calls: 2, Errors: []ErrorCount{{Outcome: "backend_error", Code: code(-32011), Count: 1}},
				P50: 5, P95: 7, Max: 7, BytesIn: 4, BytesOut: 800, LastUse: "2025-06-01T10:06:00.000Z"},
			{Name: "client:claude", Calls: 1, Errors: []ErrorCount{{Outcome: "declined", Count: 1}}, Asked: 1, Refused: 1,
				P50: 4000, P95: 4000, Max: 4000, LastUse: "2025-06-01T10:07:00.000Z"},
		},
		Confirmations: Confirmations{Asked: 1, Answers: map[string]int{"decline": 1}},
		Dropped:       7, Truncated: 1, Foreign: 2,
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestSummarizeSelectsAWindowAndATool(t *testing.T) {
	t.Parallel()
	path := testLog(t)
	for _, tc := range []struct {
		name   string
		filter Filter
		want   string // tool: calls, in order
	}{
		{"since, included", Filter{Since: time.Date(2025, 6, 1, 10, 5, 0, 0, time.UTC)}, "t_mail_delete:1 t_mail_list:1 t_mail_send:1"},
		{"until, excluded", Filter{Until: time.Date(2025, 6, 1, 10, 2, 0, 0, time.UTC)}, "t_mail_send:2"},
		{"both", Filter{Since: time.Date(2025, 6, 1, 10, 2, 0, 0, time.UTC), Until: time.Date(2025, 6, 1, 10, 5, 0, 0, time.UTC)}, "t_mail_list:1 t_mail_send:1"},
		{"a client name glob", Filter{Tool: "t_mail_[ls]*"}, "t_mail_send:4 t_mail_list:2"},
		{"a manifest name glob", Filter{Tool: "mail.del*"}, "t_mail_delete:1"},
		{"a window in another zone", Filter{Since: time.Date(2025, 6, 1, 12, 6, 0, 0, time.FixedZone("CEST", 2*3600))}, "t_mail_delete:1 t_mail_list:1"},
		{"nothing", Filter{Tool: "nope"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Summarize(t.Context(), path, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range s.Tools {
				got = append(got, fmt.Sprintf("%s:%d", r.Name, r.Calls))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("tools %q, want %q", strings.Join(got, " "), tc.want)
			}
			if s.Dropped != 7 || s.Truncated != 1 || s.Foreign != 2 {
				t.Errorf("dropped %d, truncated %d, foreign %d: the lines that are not calls count whatever the filter", s.Dropped, s.Truncated, s.Foreign)
			}
		})
	}
}

// A file a rotation renamed between listing and reading is skipped, not
// an error: here a dangling link stands for it.
func TestSummarizeSkipsAFileThatVanished(t *testing.T) {
	t.Parallel()
	path := testLog(t)
	if err := os.Symlink(filepath.Join(filepath.Dir(path), "gone"), path+".3"); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(t.Context(), path, Filter{})
	if err != nil || s.Calls != 7 || len(s.Files) != 3 {
		t.Errorf("summary %+v, %v; want the 7 calls of the 3 files there", s, err)
	}
}

// Answers refused unread are counted by why, apart from the questions
// asked and from each row's confirmations.
func TestSummarizeCountsRefusedAnswersApart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	at := Timestamp(time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC))
	entry := func(answer, refusal string) Entry {
		return Entry{Time: at, Kind: KindTool, Name: "t_del", Outcome: "refused", Confirmation: "input_required", Answer: answer, Refusal: refusal}
	}
	data := line(t, entry("accept", "")) + line(t, entry("", "forged")) + line(t, entry("", "forged")) + line(t, entry("", "replayed"))
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(t.Context(), path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := Confirmations{Asked: 1, Answers: map[string]int{"accept": 1}, Refusals: map[string]int{"forged": 2, "replayed": 1}}
	if diff := cmp.Diff(want, s.Confirmations); diff != "" {
		t.Errorf("confirmations (-want +got):\n%s", diff)
	}
	if r := s.Tools[0]; r.Calls != 4 || r.Asked != 1 || r.Refused != 0 {
		t.Errorf("the tool's row: %d calls, %d asked, %d refused; want 4, 1, 0", r.Calls, r.Asked, r.Refused)
	}
}

// Tasks are counted apart from the calls: created, and ended by how; the
// call a task runs is counted with the calls.
func TestSummarizeCountsTasksApart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	at := Timestamp(time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC))
	entry := func(kind, outcome string) Entry {
		return Entry{Time: at, Kind: kind, Name: "t_import", Outcome: outcome, Task: "t1"}
	}
	data := line(t, entry(KindTask, TaskCreated)) + line(t, entry(KindTool, OutcomeOK)) + line(t, entry(KindTask, "completed")) +
		line(t, entry(KindTask, TaskCreated)) + line(t, entry(KindTask, "expired"))
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(t.Context(), path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Tasks{Created: 2, Ended: map[string]int{"completed": 1, "expired": 1}}, s.Tasks); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if s.Calls != 1 || len(s.Tools) != 1 || s.Tools[0].Calls != 1 {
		t.Errorf("%d calls in %d rows, want the one call", s.Calls, len(s.Tools))
	}
}
