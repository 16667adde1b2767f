package console

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// writeEntries writes n audit entries over the log at path and its rotated
// files (keep of them, the oldest first), their times spread over the
// hours before now, as raw JSON lines of the audit log's format.
func writeEntries(t testing.TB, path string, n, keep int) {
	t.Helper()
	per := n / (keep + 1)
	start := time.Now().Add(-3 * time.Hour)
	step := 3 * time.Hour / time.Duration(n)
	i := 0
	for f := keep; f >= 0; f-- {
		name := path
		if f > 0 {
			name = path + "." + strconv.Itoa(f)
		}
		file, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(file, 1<<20)
		for j := 0; j < per || f == 0 && i < n; j++ {
			at := start.Add(time.Duration(i) * step).UTC().Format("2006-01-02T15:04:05.000Z")
			outcome := "ok"
			if i%17 == 0 {
				outcome = "backend_error"
			}
			fmt.Fprintf(w, `{"time":%q,"id":"3f9a1c2e-%d","pid":48113,"transport":"http","session":"c0f1e2d3a4b5968%d","principal":"client:c%d","client":"client %d","client_version":"0.9.2","protocol_version":"2025-11-25","kind":"tool","name":"tairseach_tool_%d","manifest_name":"tool.%d","method":"backend.m%d","dur_ms":%d.25,"outcome":%q,"bytes_in":164,"bytes_out":87,"arg_keys":["to","subject","body"]}`+"\n",
				at, i, i%8, i%8, i%8, i%20, i%20, i%20, 5+i%300, outcome)
			i++
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		file.Close()
	}
}

// Each page answers within 900 ms at the 95th percentile (three times the
// 300 ms the console is meant to keep) with a million entries over the
// audit log and its rotated files, while a bridge appends to it: the
// console reads the log's tail, never the whole. The figures measured are
// logged (go test -v -run Million) and in docs/console.md.
func TestPagesAnswerQuicklyWithAMillionAuditEntries(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes 380 MB; not with -short or the race detector, whose slowness is not the console's")
	}
	log := filepath.Join(t.TempDir(), "audit.log")
	begin := time.Now()
	writeEntries(t, log, 1_000_000, 5)
	var size int64
	files, _ := filepath.Glob(log + "*")
	for _, f := range files {
		fi, _ := os.Stat(f)
		size += fi.Size()
	}
	t.Logf("1,000,000 entries, %d MB in %d files, written in %s", size>>20, len(files), time.Since(begin).Round(time.Millisecond))
	f := newFixture(t, Options{AuditLog: log})
	f.c.tail = newTail(log, tailEntries)
	b := f.browser(t)
	b.login()
	appendTo, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer appendTo.Close()
	for _, p := range []string{"/ui/", "/ui/calls", "/ui/calls?tool=tairseach_tool_3&outcome=ok", "/ui/charts", "/ui/charts?by=client", "/ui/clients", "/ui/tools", "/ui/questions"} {
		var took []time.Duration
		for i := range 40 {
			// A bridge writing meanwhile: the tail reads what it appended.
			fmt.Fprintf(appendTo, `{"time":%q,"id":"z-%d","pid":1,"kind":"tool","name":"tairseach_tool_1","dur_ms":3,"outcome":"ok","bytes_in":0,"bytes_out":0}`+"\n",
				time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), i)
			f.c.tail.mu.Lock()
			f.c.tail.looked = time.Time{} // every request looks at the file
			f.c.tail.mu.Unlock()
			start := time.Now()
			res, _ := b.do("GET", p, nil)
			took = append(took, time.Since(start))
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", p, res.StatusCode)
			}
		}
		first := took[0]
		slices.Sort(took)
		p95 := took[len(took)*95/100-1]
		t.Logf("%-45s p50 %6.1f ms  p95 %6.1f ms  first %6.1f ms", p, ms(took[len(took)/2]), ms(p95), ms(first))
		if p95 > 900*time.Millisecond {
			t.Errorf("%s: p95 %s, want under 900ms", p, p95)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
