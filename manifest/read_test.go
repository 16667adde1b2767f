package manifest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A file past the limit is refused by its size, without being read.
func TestAnOversizedManifestIsNotRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil { // sparse: cheap to make
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, problems := ReadFile(p)
	runtime.ReadMemStats(&after)
	if len(problems) != 1 || !strings.HasSuffix(problems[0].String(), "big.json: error: cannot read: file is 8388609 bytes, more than the 8388608 allowed") {
		t.Errorf("problems:\n%s", joinProblems(problems))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("allocated %d bytes refusing an oversized file", n)
	}
}
