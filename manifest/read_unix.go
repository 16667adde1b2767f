//go:build unix

package manifest

import (
	"os"
	"syscall"
)

// openFlags opens a manifest without blocking: opening a named pipe for
// reading would otherwise wait for a writer. The flag does not change how
// a regular file reads.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
