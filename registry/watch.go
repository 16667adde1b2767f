package registry

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/tairseach/tairseach-mcp/manifest"
)

// Watch watches the manifest folders and reloads after changes until ctx
// is done. It watches every folder under each root (including folders
// created later) and, while a root does not exist, its nearest existing
// ancestor, so a root that appears, or is deleted and recreated, is picked
// up. Bursts of events are debounced into one reload. Watch returns nil
// when ctx is done, or an error when the watcher cannot be created.
func (r *Registry) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()

	watched := map[string]bool{}
	r.syncWatches(w, watched)
	// Anything that changed between New and now had no watch to see it.
	r.Reload()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	pending := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !r.relevant(ev) {
				continue
			}
			// A new folder must be watched before files appear in it,
			// or their events are lost; rescan catches any that slipped by.
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					r.syncWatches(w, watched)
				}
			}
			if !pending {
				pending = true
			}
			timer.Reset(r.opts.Debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// Typically an event queue overflow: events were lost, so
			// reload from scratch to be sure.
			r.log.Warn().Err(err).Msg("manifest watcher")
			pending = true
			timer.Reset(r.opts.Debounce)
		case <-timer.C:
			if !pending {
				continue
			}
			pending = false
			r.syncWatches(w, watched)
			r.Reload()
		}
	}
}

// relevant reports whether an event can change the tool table: anything
// about a folder, a root or a manifest file; not editor swap files.
func (r *Registry) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	base := filepath.Base(ev.Name)
	if strings.HasPrefix(base, ".") {
		return false
	}
	if strings.HasSuffix(base, ".json") {
		return true
	}
	// Could be a folder (created, removed or renamed) or a root's
	// ancestor; a reload is cheap when nothing parsed changed.
	return !strings.Contains(base, ".") || isDir(ev.Name) || !exists(ev.Name)
}

// syncWatches makes the watch list match the folders that exist now.
func (r *Registry) syncWatches(w *fsnotify.Watcher, watched map[string]bool) {
	want := map[string]bool{}
	for _, root := range r.opts.Dirs {
		root = filepath.Clean(root)
		if !isDir(root) {
			if a := existingAncestor(root); a != "" {
				want[a] = true
			}
			continue
		}
		_ = filepath.WalkDir(manifest.WalkRoot(root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				path = filepath.Clean(path) // a symlinked root is walked as "root/"
				if path != root && strings.HasPrefix(d.Name(), ".") {
					return fs.SkipDir
				}
				want[path] = true
			}
			return nil
		})
	}
	for p := range watched {
		if !want[p] {
			_ = w.Remove(p) // already gone when the folder was deleted
			delete(watched, p)
		}
	}
	for p := range want {
		if watched[p] {
			continue
		}
		if err := w.Add(p); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				r.log.Warn().Err(err).Str("manifest", p).Msg("cannot watch folder")
			}
			continue
		}
		watched[p] = true
	}
}

func existingAncestor(p string) string {
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
		if isDir(p) {
			return p
		}
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
