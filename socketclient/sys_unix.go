//go:build unix

package socketclient

import (
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

// alive reports whether an idle connection is still usable: the peer has
// not closed it and has sent nothing unasked. It never blocks.
func alive(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	var buf [1]byte
	// Control, not Read: a deadline left by the last call, passed since,
	// must not make an open connection look closed.
	err = raw.Control(func(fd uintptr) {
		// Go's sockets are non-blocking, so this returns at once.
		_, _, err := unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK)
		// Nothing to read means open and quiet; zero bytes means the
		// peer closed; bytes mean it sent something unasked.
		ok = err == unix.EAGAIN || err == unix.EWOULDBLOCK
	})
	return err == nil && ok
}
