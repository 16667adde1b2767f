//go:build linux

package cli

import (
	"errors"
	"net"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// fullQueueSocket returns the path of a socket that something listens on
// but never accepts from, with its queue of connections waiting to be
// accepted full: a backend that is running but too busy.
func fullQueueSocket(t *testing.T) string {
	t.Helper()
	path := filepath.Join(shortDir(t), "busy.sock")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	for {
		nc, err := net.Dial("unix", path)
		if errors.Is(err, unix.EAGAIN) {
			return path
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
	}
}

func TestDoctorSaysABusyBackendIsBusy(t *testing.T) {
	t.Parallel()
	opts := &options{socket: fullQueueSocket(t), poolSize: 1, maxReplySize: 1 << 20}
	assertResult(t, checkSocket(t.Context(), opts), check{statusFail, "backend busy at " + opts.socket, "overloaded or hung"})
}
