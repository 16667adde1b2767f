package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pollableInput returns a reader of f that waits in Go's network poller
// rather than in a blocked read, when f is a pipe (how MCP clients start
// the bridge), and a function that closes it; pollable says which. A
// blocked read holds its thread and, until the runtime takes it back some
// 20 µs later, its processor: with the bridge on one processor (see
// runServe) every call would wait for that.
//
// The pipe is opened again through /proc, which gives the bridge an open
// file description of its own: the non-blocking flag it needs is then
// seen by no one else. Setting it on f's description instead would reach
// whatever shares that description: stdout, when one socket is both (as
// inetd and socat give), which Go then writes to as a blocking file and
// fails with EAGAIN; or another process reading the same pipe, after the
// bridge has exited too. Anything else, or a failure, is returned as it
// is, with pollable false.
func pollableInput(f *os.File) (in io.Reader, done func(), pollable bool) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return f, func() {}, false
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, func() {}, false
	}
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Fstat(fd, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		unix.Close(fd) // not the same pipe: f was replaced meanwhile
		return f, func() {}, false
	}
	r := os.NewFile(uintptr(fd), f.Name())
	return r, func() { r.Close() }, true // Close also ends a read still waiting
}
