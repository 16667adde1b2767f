//go:build unix

package socketclient

import (
	"errors"
	"io/fs"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileOwner returns the user id owning a file.
func fileOwner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// peek reports, without reading or blocking, whether an idle connection
// is still open and whether bytes wait to be read on it.
func peek(c *net.UnixConn) (open, pending bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return false, false
	}
	var n int
	var peekErr error
	// Control, not Read: it runs at once, whatever the deadline. Go's
	// sockets are non-blocking, so the peek returns at once too.
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, peekErr = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
	})
	switch {
	case err != nil:
		return false, false
	case peekErr == unix.EAGAIN || peekErr == unix.EWOULDBLOCK:
		return true, false // open and quiet
	case peekErr != nil || n == 0:
		return false, false // failed, or closed by the backend
	}
	return true, true
}

// queueFull reports whether a dial failed because the listener's queue
// of connections waiting to be accepted is full. Linux says so with
// EAGAIN; other systems refuse such a connection as if nobody listened.
func queueFull(err error) bool {
	return errors.Is(err, unix.EAGAIN)
}
