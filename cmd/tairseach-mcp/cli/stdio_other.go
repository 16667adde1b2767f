//go:build !unix

package cli

import (
	"io"
	"os"
)

// pollableInput returns f as it is where it cannot be made pollable.
func pollableInput(f *os.File) (io.Reader, func()) { return f, func() {} }
