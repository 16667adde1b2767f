//go:build !unix

package cli

import (
	"io"
	"os"
)

// pollableInput returns f as it is: the poller serves stdin on Unix only
// (see stdio_unix.go).
func pollableInput(f *os.File, _ ...*os.File) (in io.Reader, done func(), pollable bool) {
	return f, func() {}, false
}
