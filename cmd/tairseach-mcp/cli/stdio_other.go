//go:build !linux

package cli

import (
	"io"
	"os"
)

// pollableInput returns f as it is: only Linux can give the bridge a
// description of its own for a pipe it inherited (see stdio_linux.go),
// and making a shared one non-blocking would reach whoever shares it.
func pollableInput(f *os.File) (in io.Reader, done func(), pollable bool) {
	return f, func() {}, false
}
