//go:build !linux && !darwin

package socketclient

import (
	"errors"
	"net"
)

var errPeerUnsupported = errors.New("peer credentials are not available on this system")

// PeerUID is not available on this system.
func PeerUID(c *net.UnixConn) (int, error) { return 0, errPeerUnsupported }

// alive cannot check without blocking here; a dead connection is found
// when the call fails.
func alive(c *net.UnixConn) bool { return true }
