package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// maxEntries bounds one files.list result; a larger folder is truncated.
const maxEntries = 1000

// fileLister serves files.list: a read-only view of one folder tree (the
// shared folder). It never follows a path or symlink out of the tree. It
// is safe for concurrent use.
type fileLister struct {
	root string // absolute
}

// fileEntry is one entry of a files.list result.
type fileEntry struct {
	Name string `json:"name"`
	// Type is file, dir, symlink or other. Symlinks are not followed.
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
}

// fileList is the result of files.list.
type fileList struct {
	Path    string      `json:"path"`
	Entries []fileEntry `json:"entries"`
	// Truncated is true when the folder has more than maxEntries entries.
	Truncated bool `json:"truncated"`
}

func (l *fileLister) list(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	p, err := bind[struct {
		Path          *string `json:"path"`
		IncludeHidden *bool   `json:"include_hidden"`
	}](params)
	if err != nil {
		return nil, err
	}
	rel := "."
	if p.Path != nil && *p.Path != "" {
		rel = *p.Path
	}
	hidden := p.IncludeHidden != nil && *p.IncludeHidden

	// The lexical check gives the clear answer for "..", "/etc" and the
	// like; os.Root enforces the boundary, symlinks included.
	if !filepath.IsLocal(rel) { // absolute, or climbing out with ..
		return nil, escapesRoot(rel)
	}
	rel = filepath.Clean(rel)

	root, err := os.OpenRoot(l.root)
	if err != nil {
		return nil, fmt.Errorf("open shared folder %s: %w", l.root, err)
	}
	defer root.Close()
	// Non-blocking: opening a named pipe or a device must not wait for a
	// peer; its type is checked before anything is read.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, openError(root, rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	if !fi.IsDir() {
		return nil, invalidParams("%s is %s, not a folder", filepath.ToSlash(rel), kindOf(fi.Mode()))
	}
	dirents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", rel, err)
	}
	slices.SortFunc(dirents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })

	out := fileList{Path: filepath.ToSlash(rel), Entries: []fileEntry{}}
	for _, d := range dirents {
		if !hidden && strings.HasPrefix(d.Name(), ".") {
			continue
		}
		info, err := d.Info() // Lstat: a symlink describes itself
		if err != nil {
			continue // removed since ReadDir
		}
		if len(out.Entries) == maxEntries {
			out.Truncated = true
			break
		}
		out.Entries = append(out.Entries, fileEntry{
			Name:     d.Name(),
			Type:     entryType(info.Mode()),
			Size:     info.Size(),
			Modified: info.ModTime().UTC().Format(time.RFC3339),
		})
	}
	return out, nil
}

// openError classifies an error from root.Open. os does not export the
// error os.Root returns for a path that leaves it (through "..", or a
// symlink pointing outside), so it is taken from a path that certainly
// does and compared by identity.
func openError(root *os.Root, rel string, err error) error {
	_, probe := root.Lstat("..")
	if escape := errors.Unwrap(probe); escape != nil && errors.Is(err, escape) {
		return escapesRoot(rel)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return &rpcError{Code: codeNotFound, Message: "no such file or directory: " + filepath.ToSlash(rel)}
	case errors.Is(err, fs.ErrPermission):
		return &rpcError{Code: codePermission, Message: "Permission denied: " + filepath.ToSlash(rel) + " is not readable"}
	}
	return fmt.Errorf("open %s: %w", rel, err)
}

func escapesRoot(rel string) error {
	return &rpcError{Code: codePermission, Message: "Permission denied: path escapes the shared folder", Data: map[string]string{"path": rel}}
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// kindOf names what a path that is not a folder is, for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a file"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "an irregular file"
}
