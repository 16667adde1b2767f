package socketclient

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkSocketOwner refuses a socket file that belongs to another user:
// it could be anyone's server, pretending to be the backend.
func checkSocketOwner(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // dialling reports a missing socket better
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("socket is owned by uid %d, not you (uid %d); refusing", st.Uid, uid)
	}
	return nil
}

// checkPeer refuses a connection whose server process runs as another user.
func checkPeer(c *net.UnixConn) error {
	uid, err := PeerUID(c)
	if err != nil {
		if err == errPeerUnsupported {
			return nil
		}
		return fmt.Errorf("cannot verify the backend process: %v", err)
	}
	if me := os.Getuid(); uid != me {
		return fmt.Errorf("the backend process runs as uid %d, not you (uid %d); refusing", uid, me)
	}
	return nil
}
