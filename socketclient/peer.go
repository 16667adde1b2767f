package socketclient

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
)

// checkSocketOwner refuses a socket file that belongs to another user: the
// server behind it could be anyone's, posing as the backend. A missing file
// is left for dialling to report.
func checkSocketOwner(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	return checkOwner(fi, os.Getuid())
}

// checkOwner is checkSocketOwner's decision for a file owned as fi says,
// apart from the file system so that tests can give any owner.
func checkOwner(fi fs.FileInfo, uid int) error {
	owner, ok := fileOwner(fi)
	if !ok || owner == uid {
		return nil
	}
	return fmt.Errorf("socket is owned by uid %d, not you (uid %d); refusing", owner, uid)
}

// checkPeer refuses a connection whose server process runs as another
// user. Where the OS cannot tell, the socket's owner was all there was to
// check.
func checkPeer(c *net.UnixConn) error {
	uid, err := PeerUID(c)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil
	case err != nil:
		return fmt.Errorf("cannot verify the backend process: %w", err)
	}
	return checkPeerUID(uid, os.Getuid())
}

// checkPeerUID is checkPeer's decision for a peer running as uid.
func checkPeerUID(peer, uid int) error {
	if peer != uid {
		return fmt.Errorf("the backend process runs as uid %d, not you (uid %d); refusing", peer, uid)
	}
	return nil
}

// PeerUID returns the user id of the process at the other end of c, as
// the kernel recorded it when the connection was made. Where the OS cannot
// tell, the error wraps errors.ErrUnsupported. A server may use it to
// check its clients.
func PeerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var uid int
	var uidErr error
	if err := raw.Control(func(fd uintptr) { uid, uidErr = peerUID(fd) }); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if uidErr != nil {
		return 0, fmt.Errorf("peer credentials: %w", uidErr)
	}
	return uid, nil
}
