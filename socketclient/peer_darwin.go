package socketclient

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// PeerUID returns the user id of the process at the other end of c, read
// with LOCAL_PEERCRED. Where the OS cannot tell, the error wraps
// errors.ErrUnsupported. A server may use it to check its clients.
func PeerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Xucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if credErr != nil {
		return 0, fmt.Errorf("peer credentials: %w", credErr)
	}
	return int(cred.Uid), nil
}
