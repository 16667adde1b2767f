package main

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerUID returns the UID of the process at the other end of c, read
// with LOCAL_PEERCRED; ok is true when the OS can tell.
func peerUID(c *net.UnixConn) (uid int, ok bool, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Xucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", err)
	}
	if credErr != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", credErr)
	}
	return int(cred.Uid), true, nil
}
