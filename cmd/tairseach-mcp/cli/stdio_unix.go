//go:build unix

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pollableInput returns a reader of f that waits in Go's network poller
// rather than in a blocked read, when f is a pipe or a socket (how MCP
// clients start the bridge), and a function that undoes it. A blocked
// read holds its thread and, until the runtime takes it back some 20 µs
// later, its processor: with the bridge on one processor (see runServe)
// that stalled every call. The reader reads a duplicate descriptor, so
// closing it leaves f open; the descriptors share the non-blocking flag,
// which the returned function puts back as it was for whoever reads f next.
// Terminals and files are returned as they are.
func pollableInput(f *os.File) (io.Reader, func()) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, func() {}
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f, func() {}
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil && flags&unix.O_NONBLOCK == 0 {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		unix.Close(fd)
		return f, func() {}
	}
	in := os.NewFile(uintptr(fd), f.Name())
	return in, func() {
		in.Close() // also ends a read still waiting
		if flags&unix.O_NONBLOCK == 0 {
			_ = unix.SetNonblock(int(f.Fd()), false)
		}
	}
}
