package socketclient

import "golang.org/x/sys/unix"

// peerUID reads the peer's user id with LOCAL_PEERCRED, as getpeereid(3)
// does.
func peerUID(fd uintptr) (int, error) {
	cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
