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
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/manifest"
)

// maxDelay bounds how long events that keep coming can put off a reload:
// a file rewritten more often than the debounce delay must not hold off
// every change.
const maxDelay = time.Second

// Watch watches the manifest folders and reloads after changes until ctx
// is done. It watches every folder under each root (including folders
// created later), the folder holding each root, so a root that appears,
// is deleted, or is a symlink pointed elsewhere is picked up, and the
// folder of the file each symlinked manifest points at. Bursts of events
// are debounced into one reload, made at most maxDelay after the first.
// Watch returns nil when ctx is done, or an error when the watcher
// cannot be created.
func (r *Registry) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()

	ws := &watches{w: w, log: r.log, paths: map[string]string{}}
	ws.sync(r.opts.Dirs)
	// Anything that changed between New and now had no watch to see it.
	r.Reload()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var deadline time.Time // of the pending reload; zero when none is pending
	schedule := func() {
		if deadline.IsZero() {
			deadline = time.Now().Add(maxDelay)
		}
		timer.Reset(min(r.opts.Debounce, time.Until(deadline)))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !ws.relevant(ev) {
				continue
			}
			// A new folder must be watched before files appear in it,
			// or their events are lost; the reload catches any that slipped by.
			if ev.Has(fsnotify.Create) && isDir(ev.Name) {
				ws.sync(r.opts.Dirs)
			}
			schedule()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// Typically an event queue overflow: events were lost, so
			// reload from scratch to be sure.
			r.log.Warn().Err(err).Msg("manifest watcher")
			schedule()
		case <-timer.C:
			deadline = time.Time{}
			ws.sync(r.opts.Dirs)
			r.Reload()
		}
	}
}

// watches keeps the watch list of a Watch in step with the folders.
type watches struct {
	w   *fsnotify.Watcher
	log zerolog.Logger
	// paths maps each watched folder to what it resolved to when the
	// watch was added: a path whose symlink now points elsewhere is
	// watched again.
	paths map[string]string
	// targets are the files symlinked manifests point at.
	targets map[string]bool
}

// relevant reports whether an event can change the tool table: anything
// about a folder, a root or a manifest file; not editor swap files. A
// change of attributes counts: chmod decides whether a folder or a file
// can be read, and whether others can write it.
func (ws *watches) relevant(ev fsnotify.Event) bool {
	if ws.targets[ev.Name] {
		return true
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

// sync makes the watch list match the folders that exist now.
func (ws *watches) sync(roots []string) {
	want := map[string]bool{}
	ws.targets = map[string]bool{}
	for _, root := range roots {
		root = filepath.Clean(root)
		// The folder holding the root sees it appear, go, or change
		// where it points.
		if a := existingAncestor(root); a != "" {
			want[a] = true
		}
		if !isDir(root) {
			continue
		}
		_ = filepath.WalkDir(manifest.WalkRoot(root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			path = filepath.Clean(path) // a symlinked root is walked as "root/"
			switch {
			case d.IsDir():
				if path != root && strings.HasPrefix(d.Name(), ".") {
					return fs.SkipDir
				}
				want[path] = true
			case d.Type()&fs.ModeSymlink != 0 && manifest.IsManifestName(path):
				// Edits to the file it points at happen in that file's folder.
				if target, err := filepath.EvalSymlinks(path); err == nil {
					ws.targets[target] = true
					want[filepath.Dir(target)] = true
				}
			}
			return nil
		})
	}
	for p, resolved := range ws.paths {
		if !want[p] || resolve(p) != resolved {
			_ = ws.w.Remove(p) // already gone when the folder was deleted
			delete(ws.paths, p)
		}
	}
	for p := range want {
		if _, ok := ws.paths[p]; ok {
			continue
		}
		if err := ws.w.Add(p); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				ws.log.Warn().Err(err).Str("manifest", p).Msg("cannot watch folder")
			}
			continue
		}
		ws.paths[p] = resolve(p)
	}
}

// resolve returns the path p leads to, symlinks followed; "" when none.
func resolve(p string) string {
	r, _ := filepath.EvalSymlinks(p)
	return r
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
