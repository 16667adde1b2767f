package registry

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// Floors of TestSearchRecall: the figures the ranking reaches now, over
// testdata/search-eval.tsv. Raise them when the ranking gets better.
const (
	floorRecallAt1 = 0.69
	floorRecallAt5 = 0.96
)

// catalogueDirs are the example manifests and the realistic catalogue.
var catalogueDirs = []string{"../manifests-example", "testdata/catalogue"}

func TestSearchRecall(t *testing.T) {
	r := New(Options{Dirs: catalogueDirs, Prefix: "tairseach"})
	s := NewSearch(r)
	snap := r.Snapshot()
	f, err := os.Open("testdata/search-eval.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n, at1, at5 int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want, query, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(want, "#") {
			continue
		}
		if _, found := snap.Lookup("tairseach_" + strings.ReplaceAll(want, ".", "_")); !found {
			t.Errorf("%s: no such tool", want)
		}
		n++
		var got []string
		for _, i := range s.indexOf(snap).Search(query, 5) {
			got = append(got, snap.Entries[i].Tool.Name)
		}
		switch {
		case len(got) > 0 && got[0] == want:
			at1++
			at5++
		case strings.Contains(" "+strings.Join(got, " ")+" ", " "+want+" "):
			at5++
			t.Logf("%q: %s at %v", query, want, got)
		default:
			t.Logf("%q: %s missing from %v", query, want, got)
		}
	}
	r1, r5 := float64(at1)/float64(n), float64(at5)/float64(n)
	t.Logf("%d requests over %d tools: recall@1 %.3f, recall@5 %.3f", n, len(snap.Entries), r1, r5)
	if n < 60 {
		t.Errorf("only %d requests", n)
	}
	if r1 < floorRecallAt1 || r5 < floorRecallAt5 {
		t.Errorf("recall@1 %.3f, recall@5 %.3f: below the floors %.3f, %.3f", r1, r5, floorRecallAt1, floorRecallAt5)
	}
}
