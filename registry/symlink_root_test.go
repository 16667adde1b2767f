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
		OnChange: func(s *Snapshot) { changes <- names(s) }})
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
