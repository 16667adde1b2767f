package clients

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// maxDelay bounds how long events that keep coming can put off a reload,
// and how often a file whose folder cannot be watched is looked at: a
// change is served within about a second.
const maxDelay = time.Second

// Watch follows the file until ctx is done: it watches the file's folder
// (an editor, and Save, replace the file by renaming another over it) and
// reads the file again after changes, a burst of events at once, at most
// maxDelay after the first. While the folder cannot be watched (it does
// not exist yet, so neither does the file), it tries again every
// maxDelay. It returns nil when ctx is done, or the error of a watcher
// that cannot be made.
func (s *Set) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	dir, base := filepath.Dir(s.path), filepath.Base(s.path)
	watching := w.Add(dir) == nil
	// Anything that changed between Open and now had no watch to see it.
	_ = s.Reload()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	poll := time.NewTicker(maxDelay)
	defer poll.Stop()
	var deadline time.Time // of the pending reload; zero when none is pending
	schedule := func() {
		if deadline.IsZero() {
			deadline = time.Now().Add(maxDelay)
		}
		timer.Reset(min(s.opts.Debounce, time.Until(deadline)))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			switch {
			case filepath.Base(ev.Name) == base:
				schedule()
			case ev.Name == dir && ev.Has(fsnotify.Remove|fsnotify.Rename):
				watching = false // the folder went: poll until it comes back
				schedule()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// Typically an event queue overflow: read the file to be sure.
			s.log.Warn().Err(err).Str("clients", s.path).Msg("clients file watcher")
			schedule()
		case <-timer.C:
			deadline = time.Time{}
			_ = s.Reload()
		case <-poll.C:
			if !watching {
				if watching = w.Add(dir) == nil; watching {
					schedule() // the folder is back: the file may be too
				}
			}
		}
	}
}
