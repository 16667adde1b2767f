//go:build unix

package registry

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// A manifest folder made unreadable takes its tools away, and made
// readable again brings them back, without any other edit: chmod makes
// only an attribute event, which the watcher must follow.
func TestManifestFolderPermissionsAreFollowed(t *testing.T) {
	if os.Geteuid() == 0 {
		rerunUnprivileged(t) // root reads whatever the mode says
		return
	}
	// setup returns a manifest root with a readable manifest and one in
	// the folder mail, which it leaves with mode.
	setup := func(t *testing.T, mode os.FileMode) (dir, mail string) {
		dir = t.TempDir()
		mail = filepath.Join(dir, "mail")
		writeFile(t, filepath.Join(mail, "m.json"), manifestJSON("m", "mail.send"))
		writeFile(t, filepath.Join(dir, "o.json"), manifestJSON("o", "other"))
		chmod(t, mail, mode)
		t.Cleanup(func() { os.Chmod(mail, 0o755) }) // for TempDir's removal
		return dir, mail
	}
	t.Run("made unreadable, then readable again", func(t *testing.T) {
		t.Parallel()
		dir, mail := setup(t, 0o755)
		_, changes := watchRegistry(t, dir)
		chmod(t, mail, 0)
		expectNames(t, changes, "other")
		chmod(t, mail, 0o755)
		expectNames(t, changes, "mail_send,other")
	})
	t.Run("unreadable at start, then readable: the folder is watched from then on", func(t *testing.T) {
		t.Parallel()
		dir, mail := setup(t, 0)
		r, changes := watchRegistry(t, dir)
		if got := names(r.Snapshot()); got != "other" {
			t.Fatalf("served %q from the start, want only other", got)
		}
		chmod(t, mail, 0o755)
		expectNames(t, changes, "mail_send,other")
		writeFile(t, filepath.Join(mail, "n.json"), manifestJSON("n", "mail.read"))
		expectNames(t, changes, "mail_send,mail_read,other")
	})
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// unprivileged is the user a test runs as when permissions must hold.
const unprivileged = 65534 // nobody

// rerunUnprivileged runs the test again, in a copy of the test binary
// that every user can run, as the user nobody, and reports its outcome.
// It skips when this process cannot switch users.
func rerunUnprivileged(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "unprivileged")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	if err := copyFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	// Coverage output would go to a folder of root's.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOCOVERDIR=") })
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivileged, Gid: unprivileged}}
	out, err := cmd.CombinedOutput()
	switch {
	case errors.Is(err, syscall.EPERM):
		t.Skipf("running as root, which permissions do not stop, and cannot run as uid %d: %v", unprivileged, err)
	case err != nil:
		t.Fatalf("as uid %d: %v\n%s", unprivileged, err, out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()):
		t.Fatalf("as uid %d, the test did not pass:\n%s", unprivileged, out)
	}
	t.Logf("running as root, which permissions do not stop: passed as uid %d", unprivileged)
}

func copyFile(dst, src string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
