//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// validate and tools return promptly on a folder holding a named pipe,
// list it as a problem and serve the rest.
func TestValidateAndToolsReportANamedPipeWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.json"), []byte(okManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"validate lists the pipe as an error", []string{"validate", dir}, exitError,
			[]string{"pipe.json: error: cannot read: not a regular file (named pipe)", "1 tool served; 1 error, 0 warnings"}},
		{"tools lists the other manifest's tools", []string{"tools", "--manifests", dir}, exitError,
			[]string{"tairseach_notes_list"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, out, _ := testEnv(nil)
			code := make(chan int, 1)
			// Runs the command; ends when it returns (never, if it blocks for good).
			go func() { code <- run(t.Context(), e, tt.args) }()
			select {
			case got := <-code:
				if got != tt.wantCode {
					t.Errorf("exit %d, want %d", got, tt.wantCode)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("still running after 5s")
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
