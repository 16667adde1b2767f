package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by ReadData's error for a path that is not a
// regular file: a named pipe, socket, device or folder, also when a
// symlink points at one.
var ErrNotRegular = errors.New("not a regular file")

// ReadData returns the contents of the manifest file at path; the
// registry and ReadFile both read manifests through it. It never blocks
// on, or reads without end from, something that is not a regular file:
// whatever the path names (after symlinks) is refused unless it is a
// regular file, both before it is opened (so a device is not even opened)
// and, through the opened file, after (so a path swapped in between is
// caught too). The open does not wait for a named pipe's writer, and at
// most MaxFileSize+1 bytes are read, so a file that grows while it is read
// is refused too. Errors are *fs.PathError; the ones for a path that is
// not a regular file wrap ErrNotRegular.
func ReadData(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	return readOpened(path)
}

// readOpened opens path without blocking and reads it if the opened file
// is a regular file of at most MaxFileSize bytes.
func readOpened(path string) ([]byte, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	// Room for the size fstat gave and one read more, which sees EOF: a
	// file that did not change is read without growing the buffer. At
	// most one byte past the limit is read, so a file that grew past it
	// since is noticed without being held in memory.
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileSize+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if len(data) > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("file is more than the %d bytes allowed", MaxFileSize)}
	}
	return data, nil
}

// checkRegular refuses anything but a regular file of at most MaxFileSize bytes.
func checkRegular(path string, fi fs.FileInfo) error {
	if err := checkType(path, fi); err != nil {
		return err
	}
	if fi.Size() > MaxFileSize {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("file is %d bytes, more than the %d allowed", fi.Size(), MaxFileSize)}
	}
	return nil
}

// checkType refuses anything but a regular file.
func checkType(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, fileKind(fi.Mode()))}
	}
	return nil
}

// ReadTail returns the last limit bytes of the regular file at path (all
// of it when it is shorter) and the file's size, for a file resource: a
// log grows at its end. Like ReadData it never blocks on, or reads
// without end from, something that is not a regular file, and refuses
// one (its error wraps ErrNotRegular); a file that grows while it is read
// gives at most limit bytes all the same.
func ReadTail(path string, limit int64) (data []byte, size int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if err := checkType(path, fi); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, 0, err
	}
	if err := checkType(path, fi); err != nil {
		return nil, 0, err
	}
	size = fi.Size()
	buf := bytes.NewBuffer(make([]byte, 0, min(limit, size)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.NewSectionReader(f, max(0, size-limit), limit)); err != nil {
		return nil, 0, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return buf.Bytes(), size, nil
}

// fileKind names what a non-regular file is, for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "folder"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	default:
		return "irregular file"
	}
}

// ReadProblem is the problem that reports err, an error of ReadData for
// file: the file is not served.
func ReadProblem(file string, err error) Problem {
	return Problem{File: file, Severity: Error, Message: fmt.Sprintf("cannot read: %v", unwrapPathError(err))}
}
