//go:build !unix

package socketclient

import (
	"io/fs"
	"net"
)

// fileOwner cannot tell on this OS.
func fileOwner(fs.FileInfo) (uid int, ok bool) { return 0, false }

// peek cannot look without blocking on this OS: an idle connection is
// taken as open and quiet, and a dead one is found by the call using it.
func peek(*net.UnixConn) (open, pending bool) { return true, false }

// queueFull cannot tell a full queue on this OS.
func queueFull(error) bool { return false }
