package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files lists the manifest files under dirs: every *.json file, found
// recursively, skipping hidden files and folders (editor backups, .git).
// Files come in a stable order: dirs in the order given, each sorted by
// path. A missing folder is not an error (it holds zero manifests) but is
// reported as a warning; a folder that cannot be read is an error problem.
// Entries are listed by name and never opened: one that is not a regular
// file, such as a named pipe called x.json, is refused when read (see
// ReadData).
func Files(dirs ...string) ([]string, []Problem) {
	var files []string
	var problems []Problem
	seen := map[string]bool{}
	for _, dir := range dirs {
		var found []string
		dir = WalkRoot(dir)
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == dir && errors.Is(err, fs.ErrNotExist) {
					problems = append(problems, Problem{File: dir, Severity: Warning, Message: "manifest folder does not exist (yet); it holds no tools"})
					return fs.SkipAll
				}
				problems = append(problems, Problem{File: path, Severity: Error, Message: fmt.Sprintf("cannot read: %v", unwrapPathError(err))})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if path != dir && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() || IsManifestName(path) {
				if p, ok := worldWritable(path, d); ok {
					problems = append(problems, p)
				}
			}
			if !d.IsDir() && IsManifestName(path) && !seen[path] {
				seen[path] = true
				found = append(found, path)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipAll) {
			problems = append(problems, Problem{File: dir, Severity: Error, Message: err.Error()})
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, problems
}

// WalkRoot returns what to give filepath.WalkDir to walk the manifest
// folder dir. WalkDir does not enter a root that is a symlink, and a
// dotfiles setup often links ~/.tairseach/manifests to elsewhere: such a
// root gets a trailing separator, which makes the system follow the link,
// while the paths WalkDir joins below it stay as clean as for any folder.
// Links further down are not followed, so a loop cannot be walked.
func WalkRoot(dir string) string {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return filepath.Clean(dir) + string(filepath.Separator)
		}
	}
	return dir
}

// worldWritable warns about a folder or manifest that other users can
// change: whoever can write a manifest decides what tools a model is
// offered and which backend methods they call.
func worldWritable(path string, d fs.DirEntry) (Problem, bool) {
	var fi fs.FileInfo
	var err error
	if d.Type()&fs.ModeSymlink != 0 {
		// A symlink's own mode is always 0777 and means nothing: what
		// matters is who can write the file it points at.
		fi, err = os.Stat(path)
	} else {
		fi, err = d.Info()
	}
	if err != nil || fi.Mode().Perm()&0o002 == 0 {
		return Problem{}, false
	}
	if !d.IsDir() && !fi.Mode().IsRegular() {
		return Problem{}, false // not read at all (see ReadData); chmod is no fix for /dev/zero
	}
	if d.IsDir() && fi.Mode()&fs.ModeSticky != 0 {
		return Problem{}, false // like /tmp: others cannot replace what is yours
	}
	return Problem{File: path, Severity: Warning,
		Message: fmt.Sprintf("writable by every user (mode %v): anyone on this machine can change the tools served; chmod o-w", fi.Mode().Perm())}, true
}

// IsManifestName reports whether a path names a manifest file: *.json,
// not hidden.
func IsManifestName(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, ".json") && !strings.HasPrefix(base, ".")
}

// ReadFile reads and parses one manifest file. See ReadData and Parse.
func ReadFile(path string) (*Manifest, []Problem) {
	data, err := ReadData(path)
	if err != nil {
		return nil, []Problem{ReadProblem(path, err)}
	}
	return Parse(path, data)
}

// Load reads every manifest under dirs (see Files) and returns the ones
// that can be served, in file order, with every problem found.
func Load(dirs ...string) ([]*Manifest, []Problem) {
	files, problems := Files(dirs...)
	var ms []*Manifest
	for _, f := range files {
		m, ps := ReadFile(f)
		problems = append(problems, ps...)
		if m != nil {
			ms = append(ms, m)
		}
	}
	return ms, problems
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
