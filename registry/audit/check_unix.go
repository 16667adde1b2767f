//go:build unix

package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// minFree is the free space below which a log is as good as unwritable.
const minFree = 1 << 20

// Check tells whether a bridge could write the log at path now, without
// writing anything or creating the log: it returns what it found and,
// when the bridge could not write there, why.
func Check(path string) (State, error) {
	var st State
	if files, err := Files(path); err == nil {
		st.Rotated = len(files)
	}
	dir := filepath.Dir(path)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR):
		if dir, err = existingDir(dir); err != nil {
			return st, err
		}
		if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
			return st, fmt.Errorf("cannot create %s: %s is not writable", path, dir)
		}
	case err != nil:
		return st, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return st, fmt.Errorf("%s is a symbolic link: the audit log is never written through one", path)
	case !fi.Mode().IsRegular():
		return st, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	default:
		st.Exists, st.Size, st.Mode = true, fi.Size(), fi.Mode().Perm()
		st.Rotated--
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err != nil {
			return st, err
		}
		f.Close()
	}
	if st.Free, err = free(dir); err == nil && st.Free < minFree {
		err = fmt.Errorf("the file system of %s is full (%d bytes free)", path, st.Free)
	}
	return st, err
}

// existingDir returns dir, or its nearest ancestor that exists, which
// must be a folder: the writer creates the rest.
func existingDir(dir string) (string, error) {
	for {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && fi.IsDir():
			return dir, nil
		case err == nil:
			return "", fmt.Errorf("cannot create the audit log's folder: %s is not a folder", dir)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOTDIR):
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", err
		}
		dir = parent
	}
}

func free(dir string) (uint64, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return 0, err
	}
	return uint64(s.Bavail) * uint64(s.Bsize), nil
}
