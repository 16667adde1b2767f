package audit

import "io/fs"

// State is what Check finds at a log's path.
type State struct {
	// Exists is true when the log is there; Size is then its size and
	// Mode its permissions.
	Exists bool
	Size   int64
	Mode   fs.FileMode
	// Rotated is the number of rotated files beside it.
	Rotated int
	// Free is the space left on the log's file system, in bytes.
	Free uint64
}
