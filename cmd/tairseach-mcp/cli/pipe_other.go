//go:build !linux

package cli

import "os"

// growPipe does nothing where pipe buffers cannot be resized.
func growPipe(*os.File) {}
