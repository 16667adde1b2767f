package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// auditLog writes a log of a few calls for stats.
func auditLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	var b strings.Builder
	for _, e := range []audit.Entry{
		{Time: "2025-06-01T10:00:00.000Z", Kind: "tool", Name: "tairseach_mail_send", ManifestName: "mail.send", Principal: "client:claude", Client: "claude-ai", ClientVersion: "0.9",
			Outcome: "ok", Duration: 120, BytesIn: 300, BytesOut: 2048},
		{Time: "2025-06-01T10:01:00.000Z", Kind: "tool", Name: "tairseach_mail_send", ManifestName: "mail.send", Principal: "client:claude", Client: "claude-ai", ClientVersion: "0.9",
			Outcome: "backend_error", Code: new(int64(-32011)), Duration: 40, BytesIn: 300, BytesOut: 60},
		{Time: "2025-06-01T10:02:00.000Z", Kind: "task", Name: "tairseach_mail_search", ManifestName: "mail.search", Principal: "client:cursor", Client: "cursor", ClientVersion: "1.2",
			Outcome: "created", Task: "t1"},
		{Time: "2025-06-01T10:02:00.000Z", Kind: "tool", Name: "tairseach_mail_search", ManifestName: "mail.search", Principal: "client:cursor", Client: "cursor", ClientVersion: "1.2",
			Outcome: "ok", Duration: 2500, BytesIn: 20, BytesOut: 3 << 20, Task: "t1"},
		{Time: "2025-06-01T10:02:00.000Z", Kind: "task", Name: "tairseach_mail_search", ManifestName: "mail.search", Principal: "client:cursor", Client: "cursor", ClientVersion: "1.2",
			Outcome: "completed", Duration: 2600, Task: "t1"},
		{Time: "2025-06-01T10:03:00.000Z", Kind: "tool", Name: "tairseach_mail_delete", ManifestName: "mail.delete", Principal: "process", Client: "claude-ai", ClientVersion: "0.9",
			Outcome: "declined", Confirmation: "elicitation", Answer: "decline", Duration: 9000},
	} {
		line, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteString("\n")
	}
	b.WriteString(`{"time":"2025-06-01T10:04:00.000Z","kind":"dropped","dropped":3}` + "\n" + `{"time":"2025-06-01T10:05`)
	writeFile(t, path, b.String(), 0o600)
	return path
}

func TestStatsSummarisesTheLog(t *testing.T) {
	path := auditLog(t)
	var out strings.Builder
	so := statsOptions{now: func() time.Time { return time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC) }}
	if err := runStats(t.Context(), &out, path, so); err != nil {
		t.Fatal(err)
	}
	want := path + `
4 calls, 2 errors (50.0%), from 2025-06-01 10:00 to 2025-06-01 10:03

TOOL                   CALLS  ERRORS  P50   P95    MAX    IN    OUT   LAST USE          ERRORS BY KIND
tairseach_mail_send    2      1       40ms  120ms  120ms  600B  2.1K  2025-06-01 10:01  1 backend_error (-32011)
tairseach_mail_delete  1      1       9.0s  9.0s   9.0s   0B    0B    2025-06-01 10:03  1 declined, 1 of 1 confirmations refused
tairseach_mail_search  1      0       2.5s  2.5s   2.5s   20B   3.0M  2025-06-01 10:02

CLIENT         CALLS  ERRORS  P50    P95   MAX   IN    OUT   LAST USE          ERRORS BY KIND
claude-ai 0.9  3      2       120ms  9.0s  9.0s  600B  2.1K  2025-06-01 10:03  1 backend_error (-32011), 1 declined, 1 of 1 confirmations refused
cursor 1.2     1      0       2.5s   2.5s  2.5s  20B   3.0M  2025-06-01 10:02

Confirmations asked: 1 (1 decline)

Tasks created: 1; ended: 1 completed

Note: 3 entries were lost by bridges that could not write them (not counted above); 1 truncated line skipped.
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

// --by principal groups the second table by whom the calls were for: the
// named client, whatever the client calls itself.
func TestStatsByPrincipal(t *testing.T) {
	path := auditLog(t)
	var out strings.Builder
	so := statsOptions{by: "principal", now: func() time.Time { return time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC) }}
	if err := runStats(t.Context(), &out, path, so); err != nil {
		t.Fatal(err)
	}
	want := `
PRINCIPAL      CALLS  ERRORS  P50   P95    MAX    IN    OUT   LAST USE          ERRORS BY KIND
client:claude  2      1       40ms  120ms  120ms  600B  2.1K  2025-06-01 10:01  1 backend_error (-32011)
client:cursor  1      0       2.5s  2.5s   2.5s   20B   3.0M  2025-06-01 10:02
process        1      1       9.0s  9.0s   9.0s   0B    0B    2025-06-01 10:03  1 declined, 1 of 1 confirmations refused
`
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "CLIENT ") {
		t.Errorf("stats --by principal:\n%s\nwant the table\n%s", out.String(), want)
	}
	so.by = "token"
	if err := runStats(t.Context(), &out, path, so); err == nil {
		t.Error("--by token: no error")
	}
}

func TestStatsCommand(t *testing.T) {
	path := auditLog(t)
	stats := func(vars map[string]string, args ...string) (int, string, string) {
		e, out, errb := testEnv(vars)
		code := run(context.Background(), e, append([]string{"stats"}, args...))
		return code, out.String(), errb.String()
	}
	for _, tc := range []struct {
		name  string
		vars  map[string]string
		args  []string
		calls int
	}{
		{"the log named", nil, []string{path, "--json"}, 4},
		{"the log of --audit-log's variable", map[string]string{"TAIRSEACH_AUDIT_LOG": path}, []string{"--json"}, 4},
		{"the log of --audit-log", nil, []string{"--audit-log", path, "--json"}, 4},
		{"a flag of the bridge's variables that stats does not take", map[string]string{"TAIRSEACH_AUDIT_LOG": path, "TAIRSEACH_CALL_TIMEOUT": "soon"}, []string{"--json"}, 4},
		{"since a time", nil, []string{path, "--json", "--since", "2025-06-01T10:02:00Z"}, 2},
		{"until a time", nil, []string{path, "--json", "--until", "2025-06-01T10:02:00Z"}, 2},
		{"one tool by its manifest name", nil, []string{path, "--json", "--tool", "mail.se*"}, 3},
		{"a window with nothing in it", nil, []string{path, "--json", "--since", "1h"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errb := stats(tc.vars, tc.args...)
			var s audit.Summary
			if err := json.Unmarshal([]byte(out), &s); code != exitOK || err != nil {
				t.Fatalf("exit %d (%v): %s%s", code, err, out, errb)
			}
			if s.Calls != tc.calls || s.Truncated != 1 || s.Dropped != 3 {
				t.Errorf("%d calls, %d truncated, %d dropped; want %d calls, 1, 3", s.Calls, s.Truncated, s.Dropped, tc.calls)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no log there", []string{filepath.Join(t.TempDir(), "none.log")}, exitError, "no audit log at"},
		{"a bad --since", []string{path, "--since", "yesterday"}, exitUsage, "neither a duration ago"},
		{"a bad --tool", []string{path, "--tool", "[a"}, exitUsage, "--tool"},
		{"two paths", []string{path, path}, exitUsage, "accepts at most 1 arg"},
		{"a flag of the bridge that stats does not take", []string{path, "--socket", "/x.sock"}, exitUsage, "unknown flag: --socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, errb := stats(nil, tc.args...); code != tc.code || !strings.Contains(errb, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb, tc.code, tc.want)
			}
		})
	}
}

func TestStatsDrawsBarsOnATerminal(t *testing.T) {
	s, err := audit.Summarize(t.Context(), auditLog(t), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printStats(&out, s, "client", time.UTC, true)
	for _, want := range []string{"tairseach_mail_send    2      ████████████  1", "tairseach_mail_delete  1      ██████        1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	for _, tc := range []struct {
		n, most int
		want    string
	}{
		{10, 10, "████"},
		{1, 10, "▍"},
		{5, 10, "██"},
		{7, 10, "██▊"},
	} {
		if got := drawBar(tc.n, tc.most, 4); got != tc.want {
			t.Errorf("drawBar(%d of %d) = %q, want %q", tc.n, tc.most, got, tc.want)
		}
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2025, 6, 10, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"90m", now.Add(-90 * time.Minute)},
		{"7d", now.AddDate(0, 0, -7)},
		{"2025-06-01", time.Date(2025, 6, 1, 0, 0, 0, 0, now.Location())},
		{"2025-06-01T15:04", time.Date(2025, 6, 1, 15, 4, 0, 0, now.Location())},
		{"2025-06-01 15:04:05", time.Date(2025, 6, 1, 15, 4, 5, 0, now.Location())},
		{"2025-06-01T15:04:05Z", time.Date(2025, 6, 1, 15, 4, 5, 0, time.UTC)},
	} {
		if got, err := parseWhen(tc.in, now); err != nil || !got.Equal(tc.want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"yesterday", "-3d", "2025-13-01"} {
		if _, err := parseWhen(bad, now); err == nil {
			t.Errorf("parseWhen(%q) is no error", bad)
		}
	}
}
