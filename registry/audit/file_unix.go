//go:build unix

package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// logFile is the writer goroutine's hold on the log: the file it appends
// to and the lock file beside it. It is not safe for concurrent use.
//
// Every write, and every rotation, happens under an exclusive flock on
// PATH.lock, taken by each process for the time of one write(2) of
// whole lines. Under the lock a process checks that its descriptor is
// still the file at PATH (another process may have rotated it, or the
// folder may be gone) and reopens it if not, ends a line a killed writer
// left partial, rotates when the write would pass the size limit, and
// appends. So lines never interleave or tear, whatever the file system
// does with concurrent appends, and no entry is written to a file that a
// rotation is about to remove. docs/audit.md has the reasoning.
type logFile struct {
	path    string
	maxSize int64
	keep    int

	f    *os.File // the log; nil until opened
	lock *os.File // PATH.lock; nil until opened
}

// openFlags open the log and its lock: never through a symbolic link at
// the path, and without blocking on a named pipe (which is then refused,
// as anything but a regular file is).
const openFlags = os.O_RDWR | os.O_CREATE | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// write appends b, whole lines, to the log.
func (lf *logFile) write(b []byte) error {
	if err := lf.acquire(); err != nil {
		return err
	}
	defer unix.Flock(int(lf.lock.Fd()), unix.LOCK_UN)
	if err := lf.current(); err != nil {
		return err
	}
	size, err := lf.size()
	if err != nil {
		return err
	}
	if size > 0 && size+int64(len(b)) > lf.maxSize {
		if err := lf.rotate(); err != nil {
			return err
		}
	} else if err := lf.endLine(size); err != nil {
		return err
	}
	// Under the lock no other process writes: a short write (a full
	// disk) is finished by os.File.Write's next one, or fails.
	_, err = lf.f.Write(b)
	return err
}

// acquire takes the exclusive lock, on the lock file that is at its path
// now: one removed with its folder no longer excludes anyone.
func (lf *logFile) acquire() error {
	for range 3 {
		if lf.lock == nil {
			if err := os.MkdirAll(filepath.Dir(lf.path), 0o700); err != nil {
				return err
			}
			f, err := openRegular(lf.path + ".lock")
			if err != nil {
				return err
			}
			lf.lock = f
		}
		if err := flock(lf.lock, unix.LOCK_EX); err != nil {
			return fmt.Errorf("lock %s: %w", lf.lock.Name(), err)
		}
		if same(lf.lock, lf.lock.Name()) {
			return nil
		}
		unix.Flock(int(lf.lock.Fd()), unix.LOCK_UN)
		lf.lock.Close()
		lf.lock = nil
	}
	return fmt.Errorf("lock %s.lock: it keeps being replaced", lf.path)
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// current makes f the file at the log's path, opening it when f is not
// open yet, was rotated away or removed.
func (lf *logFile) current() error {
	if lf.f != nil && same(lf.f, lf.path) {
		return nil
	}
	if lf.f != nil {
		lf.f.Close()
		lf.f = nil
	}
	f, err := openRegular(lf.path)
	if err != nil {
		return err
	}
	lf.f = f
	return nil
}

// same reports whether f is the file at path.
func same(f *os.File, path string) bool {
	at, err := os.Lstat(path)
	if err != nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && os.SameFile(at, fi)
}

// openRegular opens (or creates, 0600) a regular file at path for
// appending, never through a symbolic link.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, openFlags|os.O_APPEND, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: the audit log is never written through one", path)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	return f, nil
}

func (lf *logFile) size() (int64, error) {
	fi, err := lf.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// endLine ends the last line of the log when a writer killed in the
// middle of one left it without its newline, so that it does not run
// into the next entry: the partial line stays, alone, and readers skip it.
func (lf *logFile) endLine(size int64) error {
	if size == 0 {
		return nil
	}
	last := make([]byte, 1)
	if _, err := lf.f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err := lf.f.Write([]byte("\n"))
	return err
}

// rotate renames PATH to PATH.1, PATH.1 to PATH.2 and so on, the oldest
// (PATH.<keep>) being replaced, and opens a new PATH.
func (lf *logFile) rotate() error {
	for i := lf.keep - 1; i >= 1; i-- {
		err := os.Rename(rotated(lf.path, i), rotated(lf.path, i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(lf.path, rotated(lf.path, 1)); err != nil {
		return err
	}
	return lf.current()
}

// open opens the log and its lock without writing, to report a log that
// cannot be written at once.
func (lf *logFile) open() error {
	if err := lf.acquire(); err != nil {
		return err
	}
	defer unix.Flock(int(lf.lock.Fd()), unix.LOCK_UN)
	return lf.current()
}

func (lf *logFile) close() {
	for _, f := range []*os.File{lf.f, lf.lock} {
		if f != nil {
			f.Close()
		}
	}
	lf.f, lf.lock = nil, nil
}
