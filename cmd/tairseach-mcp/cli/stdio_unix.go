//go:build unix && !aix

package cli

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pollableInput returns a reader of f, the bridge's stdin, that waits in
// Go's network poller rather than in a blocked read, and a function that
// closes it and undoes what was changed; pollable says whether it does.
// A blocked read holds its thread and, until the runtime takes it back
// some 20 µs later, its processor: with the bridge on one processor (see
// runServe) every call would wait for that.
//
// MCP clients start the bridge with a pipe (Go's os/exec, Python) or a
// socket (Node's child_process, so Claude Desktop and the Inspector) on
// stdin. Each needs the non-blocking flag on an open file description,
// and that flag is seen by everything sharing the description: the
// reopened pipe (see reopenPipe) shares nothing, while a socket cannot be
// opened again and is made non-blocking where it is (see
// pollableSocket). shared are the bridge's other standard files. Any
// other input, or a failure, is returned as it is, with pollable false.
func pollableInput(f *os.File, shared ...*os.File) (in io.Reader, done func(), pollable bool) {
	fd, ok := fdOf(f)
	var st unix.Stat_t
	if !ok || unix.Fstat(fd, &st) != nil {
		return f, func() {}, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return reopenPipe(f, fd, &st)
	case unix.S_IFSOCK:
		return pollableSocket(f, fd, &st, shared)
	}
	return f, func() {}, false
}

// pollableSocket makes the socket on fd non-blocking and reads it through
// a descriptor of its own, which done closes (ending a read still
// waiting) before it makes the socket blocking again, if it was. The
// socket's description is shared with the client's copy only if the
// client kept the bridge's end open, which Node does not; a wrapper
// process (a shell that started the bridge) shares it while it waits,
// and finds it as it was once the bridge has ended, unless killed.
//
// Not when the socket is also one of the files in shared, as inetd and
// socat give one socket as stdin and stdout: os.Stdout writes it as a
// blocking file and would fail with EAGAIN.
func pollableSocket(f *os.File, fd int, st *unix.Stat_t, shared []*os.File) (io.Reader, func(), bool) {
	for _, o := range shared {
		var ost unix.Stat_t
		if ofd, ok := fdOf(o); ok && unix.Fstat(ofd, &ost) == nil && ost.Dev == st.Dev && ost.Ino == st.Ino {
			return f, func() {}, false
		}
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return f, func() {}, false
	}
	own, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f, func() {}, false
	}
	restore := func() {}
	if flags&unix.O_NONBLOCK == 0 {
		if unix.SetNonblock(own, true) != nil {
			unix.Close(own)
			return f, func() {}, false
		}
		restore = func() { _ = unix.SetNonblock(fd, false) }
	}
	r, ok := pollableFile(own, f.Name())
	if !ok {
		restore()
		return f, func() {}, false
	}
	return r, func() { closeSoon(r); restore() }, true
}

// closeSoon closes r, waiting at most 100 ms. Closing waits for a read in
// progress, which the poller ends at once, unless another holder of the
// socket made it blocking again meanwhile (a Node wrapper restores its
// flags as it exits): that read then ends with the process.
func closeSoon(r *os.File) {
	closed := make(chan struct{})
	go func() { r.Close(); close(closed) }()
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C:
	}
}

// pollableFile makes an *os.File of the non-blocking descriptor fd and
// checks that Go's poller took it; if not, it closes fd.
func pollableFile(fd int, name string) (*os.File, bool) {
	r := os.NewFile(uintptr(fd), name)
	// Deadlines work only on a file in the poller.
	if err := r.SetReadDeadline(time.Time{}); err != nil {
		r.Close()
		return nil, false
	}
	return r, true
}

// fdOf returns f's descriptor without f.Fd, which would make a
// non-blocking file blocking.
func fdOf(f *os.File) (int, bool) {
	if f == nil {
		return 0, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if rc.Control(func(u uintptr) { fd = int(u) }) != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}
