//go:build unix

package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A manifest folder reached through a symlink (a dotfiles setup linking
// ~/.tairseach/manifests to elsewhere) is served and watched like any.
func TestASymlinkedManifestFolderIsServedAndWatched(t *testing.T) {
	real := t.TempDir()
	writeFile(t, filepath.Join(real, "a.json"), manifestJSON("a", "one"))
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "manifests")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	changes := make(chan string, 100)
	r := New(Options{Dirs: []string{link}, Debounce: 20 * time.Millisecond,
		OnChange: func(s *Snapshot, _ Changes) { changes <- names(s) }})
	if got := names(r.Snapshot()); got != "one" {
		t.Fatalf("tools = %q, want one", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); r.Watch(ctx) }() // ends when cancelled
	t.Cleanup(func() { cancel(); <-done })
	writeFile(t, filepath.Join(real, "sub", "b.json"), manifestJSON("b", "two"))
	expectNames(t, changes, "one,two")
}

// A manifest folder given as a symlink is followed when the link is
// pointed elsewhere (ln -sfn, or removed and made again) or removed: the
// new target's tools are served and the old ones go.
func TestARepointedOrRemovedFolderSymlinkIsFollowed(t *testing.T) {
	for _, how := range []string{"renamed over", "removed and made again"} {
		t.Run(how, func(t *testing.T) {
			a, b := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(a, "a.json"), manifestJSON("a", "one"))
			writeFile(t, filepath.Join(b, "b.json"), manifestJSON("b", "two"))
			link := filepath.Join(t.TempDir(), "manifests")
			symlink(t, a, link)
			_, changes := watchRegistry(t, link)
			if how == "renamed over" {
				tmp := link + ".tmp"
				symlink(t, b, tmp)
				if err := os.Rename(tmp, link); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.Remove(link); err != nil {
					t.Fatal(err)
				}
				symlink(t, b, link)
			}
			expectNames(t, changes, "two")
			// The old target is not watched any more; the new one is.
			writeFile(t, filepath.Join(b, "c.json"), manifestJSON("c", "three"))
			expectNames(t, changes, "two,three")
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			expectNames(t, changes, "")
		})
	}
}

// Editing the file a symlinked manifest points at is seen, though that
// file lives outside the manifest folder.
func TestEditsToTheTargetOfASymlinkedManifestAreSeen(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "notes.json")
	writeFile(t, target, manifestJSON("n", "one"))
	symlink(t, target, filepath.Join(dir, "notes.json"))
	_, changes := watchRegistry(t, dir)
	writeFile(t, target, manifestJSON("n", "two"))
	expectNames(t, changes, "two")
}

// A file rewritten every 50 ms, more often than the debounce delay, does
// not hold off every reload: a change elsewhere is served all the same.
func TestABusyFileDoesNotStarveReloads(t *testing.T) {
	dir := t.TempDir()
	busy := filepath.Join(dir, "busy.json")
	writeFile(t, busy, manifestJSON("busy", "busy"))
	changes := make(chan string, 100)
	r := New(Options{Dirs: []string{dir}, Debounce: 100 * time.Millisecond, OnChange: func(s *Snapshot, _ Changes) { changes <- names(s) }})
	ctx, cancel := context.WithCancel(t.Context())
	watching, rewriting := make(chan struct{}), make(chan struct{})
	go func() { defer close(watching); r.Watch(ctx) }() // ends when cancelled
	go func() {                                         // rewrites until cancelled
		defer close(rewriting)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				writeFile(t, busy, manifestJSON("busy", "busy"))
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-watching; <-rewriting })
	writeFile(t, filepath.Join(dir, "new.json"), manifestJSON("new", "fresh"))
	expectNames(t, changes, "busy,fresh")
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
