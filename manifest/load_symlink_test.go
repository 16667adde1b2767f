//go:build unix

package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symlink's own mode is 0777 whatever its target's: the warning is about
// the file it points at.
func TestASymlinkedManifestIsJudgedByItsTargetsMode(t *testing.T) {
	for _, tt := range []struct {
		name string
		mode os.FileMode
		warn bool
	}{
		{"a symlink to a 0644 file is not writable by every user", 0o644, false},
		{"a symlink to a 0666 file is writable by every user", 0o666, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "real", "m.json.txt")
			if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target, []byte(goodManifest), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(target, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, "m.json")); err != nil {
				t.Fatal(err)
			}
			ms, problems := Load(dir)
			if len(ms) != 1 {
				t.Fatalf("served %d manifests, want 1:\n%s", len(ms), joinProblems(problems))
			}
			want := 0
			if tt.warn {
				want = 1
			}
			if len(problems) != want || tt.warn && !strings.Contains(problems[0].String(), "m.json: warning: writable by every user (mode -rw-rw-rw-)") {
				t.Errorf("problems:\n%s", joinProblems(problems))
			}
		})
	}
}
