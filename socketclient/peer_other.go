//go:build !linux && !darwin

package socketclient

import (
	"errors"
	"fmt"
	"net"
)

// PeerUID would return the user id of the process at the other end of c;
// on this OS it cannot, and the error wraps errors.ErrUnsupported. The
// client then relies on the socket file's owner alone.
func PeerUID(c *net.UnixConn) (int, error) {
	return 0, fmt.Errorf("peer credentials: %w", errors.ErrUnsupported)
}
