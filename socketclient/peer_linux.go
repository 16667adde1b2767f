package socketclient

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

var errPeerUnsupported = errors.New("peer credentials are not available on this system")

// PeerUID returns the user id of the process at the other end of c
// (SO_PEERCRED).
func PeerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, serr
	}
	return int(cred.Uid), nil
}

// alive reports whether an idle connection is still open: the peer has
// not closed it and sent nothing unexpected. It never blocks.
func alive(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	var buf [1]byte
	raw.Read(func(fd uintptr) bool {
		_, _, err := unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		// Nothing to read means open and quiet; zero bytes means the
		// peer closed; bytes mean it sent something unasked.
		ok = err == unix.EAGAIN || err == unix.EWOULDBLOCK
		return true // never wait for readiness
	})
	return ok
}
