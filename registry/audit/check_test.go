//go:build unix

package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSaysWhetherTheLogCanBeWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	log := filepath.Join(dir, "audit.log")
	for name, data := range map[string]string{file: "x", log: "a line\n", log + ".1": "", log + ".2": ""} {
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(log, link); err != nil {
		t.Fatal(err)
	}

	st, err := Check(log)
	if err != nil || !st.Exists || st.Size != 7 || st.Mode != 0o600 || st.Rotated != 2 || st.Free == 0 {
		t.Errorf("an existing log: %+v, %v", st, err)
	}
	if st, err := Check(filepath.Join(dir, "new", "folder", "audit.log")); err != nil || st.Exists {
		t.Errorf("a log to create, in folders to create: %+v, %v", st, err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"a symbolic link", link, "symbolic link"},
		{"a folder", dir, "not a regular file"},
		{"under a file", filepath.Join(file, "sub", "audit.log"), "is not a folder"},
	} {
		if _, err := Check(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
