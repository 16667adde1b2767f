package console

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func appendLines(t *testing.T, path string, from, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := from; i < from+n; i++ {
		fmt.Fprintf(f, `{"time":"2025-06-01T09:30:12.250Z","id":"x-%d","pid":1,"kind":"tool","name":"t%d","dur_ms":1,"outcome":"ok","bytes_in":0,"bytes_out":0}`+"\n", i, i)
	}
}

// The tail reads the end of the log and its rotated files at first, then
// only what is appended, and starts over after a rotation; a line being
// written waits for its end.
func TestTheTailReadsOnlyTheEnd(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	appendLines(t, log+".1", 0, 50)
	appendLines(t, log, 50, 50)
	tl := newTail(log, 80)
	look := func() []string {
		tl.looked = time.Time{}
		es, err := tl.Entries()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name)
		}
		return names
	}
	if got := look(); len(got) != 80 || got[0] != "t20" || got[79] != "t99" {
		t.Fatalf("first look: %d entries, %v … %v", len(got), got[0], got[len(got)-1])
	}
	appendLines(t, log, 100, 3)
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2025-06-01T09:30:12.250Z","id":"x-103","pid":1,"kind":"tool","name":"t1`)
	if got := look(); len(got) != 80 || got[79] != "t102" {
		t.Errorf("after appending: %v", got[len(got)-3:])
	}
	f.WriteString(`03","dur_ms":1,"outcome":"ok","bytes_in":0,"bytes_out":0}` + "\n")
	f.Close()
	if got := look(); got[79] != "t103" {
		t.Errorf("once the line ends: %v", got[len(got)-3:])
	}
	if err := os.Rename(log, log+".2"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, log, 200, 2)
	if got := look(); got[len(got)-1] != "t201" || !strings.HasPrefix(strings.Join(got, " "), "t") {
		t.Errorf("after a rotation: %v", got[len(got)-3:])
	}
}
