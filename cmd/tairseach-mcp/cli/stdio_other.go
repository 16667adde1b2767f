//go:build !unix || aix

package cli

import (
	"io"
	"os"
)

// pollableInput returns f as it is: the poller serves stdin on Unix only
// (see stdio_unix.go), and not on AIX, which has no F_DUPFD_CLOEXEC.
func pollableInput(f *os.File, _ ...*os.File) (in io.Reader, done func(), pollable bool) {
	return f, func() {}, false
}
