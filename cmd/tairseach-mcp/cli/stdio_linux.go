package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// reopenPipe opens the pipe on fd again through /proc, which gives the
// bridge an open file description of its own: the non-blocking flag it
// needs is then seen by no one else. Setting it on f's description
// instead would reach whatever shares that description, such as another
// process reading the same pipe, after the bridge has exited too. done
// closes the reader, which also ends a read still waiting.
func reopenPipe(f *os.File, fd int, st *unix.Stat_t) (io.Reader, func(), bool) {
	own, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, func() {}, false
	}
	var ost unix.Stat_t
	if unix.Fstat(own, &ost) != nil || st.Dev != ost.Dev || st.Ino != ost.Ino {
		unix.Close(own) // not the same pipe: f was replaced meanwhile
		return f, func() {}, false
	}
	r, ok := pollableFile(own, f.Name())
	if !ok {
		return f, func() {}, false
	}
	return r, func() { r.Close() }, true
}
