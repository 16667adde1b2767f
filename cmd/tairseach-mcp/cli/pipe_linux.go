package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe raises the buffer of a pipe on stdout to 1 MiB (the default
// is 64 KiB), so a large response (a tools/list of a thousand tools is
// over half a megabyte) is written in one go instead of in turns with
// the client's reads. Failure changes nothing but speed, so it is ignored.
func growPipe(f *os.File) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}
