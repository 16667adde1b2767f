//go:build !linux && !darwin

package socketclient

import "errors"

// peerUID cannot tell on this OS: the client relies on the socket file's
// owner alone.
func peerUID(uintptr) (int, error) { return 0, errors.ErrUnsupported }
