package cli

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nonblocking reads f's flags without f.Fd, which would change them.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	var ferr error
	if err := rc.Control(func(fd uintptr) { fl, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	return fl&unix.O_NONBLOCK != 0
}

func TestPollableInputPipeHasADescriptionOfItsOwn(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// A pipe from os.Pipe is non-blocking already; an inherited stdin is not.
	if err := unix.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	in, done, pollable := pollableInput(r)
	if !pollable || in == io.Reader(r) {
		t.Fatal("a pipe was not made pollable")
	}
	if nonblocking(t, r) {
		t.Error("the inherited description was made non-blocking")
	}
	readsUntilDone(t, in, done, w)
	inheritedReads(t, r, w)
}

// readsUntilDone checks that in reads what the peer writes, and that a
// read waiting for input ends when done closes in.
func readsUntilDone(t *testing.T, in io.Reader, done func(), peer *os.File) {
	t.Helper()
	peer.WriteString("first\n")
	buf := make([]byte, 16)
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "first\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	waiting := make(chan error, 1)
	go func() { _, err := in.Read(buf); waiting <- err }()
	done()
	if err := <-waiting; err == nil {
		t.Error("a waiting read returned no error after done")
	}
}

// inheritedReads checks that the inherited file is still open and reads
// what the peer writes, as before.
func inheritedReads(t *testing.T, inherited, peer *os.File) {
	t.Helper()
	peer.WriteString("second\n")
	buf := make([]byte, 16)
	if n, err := inherited.Read(buf); err != nil || string(buf[:n]) != "second\n" {
		t.Fatalf("inherited read %q, %v", buf[:n], err)
	}
}

func TestPollableInputLeavesOtherInputsAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	// One socket as stdin and stdout, as inetd and socat give: its
	// description must not turn non-blocking under os.Stdout.
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock, peer := os.NewFile(uintptr(fds[0]), "sock"), os.NewFile(uintptr(fds[1]), "peer")
	defer sock.Close()
	defer peer.Close()
	for name, f := range map[string]*os.File{"regular file": file, "socket that is also stdout": sock} {
		before := nonblocking(t, f)
		in, done, pollable := pollableInput(f, os.Stderr, f)
		done()
		if pollable || in != io.Reader(f) || nonblocking(t, f) != before {
			t.Errorf("%s: changed (pollable %v)", name, pollable)
		}
	}
}

// socketPair returns two blocking connected sockets, as a client that
// starts the bridge from Node gives it for stdin.
func socketPair(t *testing.T) (sock, peer *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock, peer = os.NewFile(uintptr(fds[0]), "sock"), os.NewFile(uintptr(fds[1]), "peer")
	t.Cleanup(func() { sock.Close(); peer.Close() })
	return sock, peer
}

func TestPollableInputSocketIsMadeBlockingAgainWhenDone(t *testing.T) {
	sock, peer := socketPair(t)
	stdout, _ := socketPair(t) // another socket, as Node gives for stdout
	in, done, pollable := pollableInput(sock, stdout, os.Stderr)
	if !pollable || in == io.Reader(sock) {
		t.Fatal("a socket was not made pollable")
	}
	if !nonblocking(t, sock) {
		t.Error("the socket's description is not non-blocking while serving")
	}
	if nonblocking(t, stdout) {
		t.Error("stdout's socket was made non-blocking")
	}
	readsUntilDone(t, in, done, peer)
	if nonblocking(t, sock) {
		t.Error("the socket was left non-blocking after done")
	}
	inheritedReads(t, sock, peer) // blocking, as before
}

func TestPollableInputSocketAlreadyNonBlockingStaysSo(t *testing.T) {
	sock, _ := socketPair(t)
	rc, err := sock.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { unix.SetNonblock(int(fd), true) })
	_, done, pollable := pollableInput(sock)
	if !pollable {
		t.Fatal("not pollable")
	}
	done()
	if !nonblocking(t, sock) {
		t.Error("a socket that was non-blocking before was made blocking")
	}
}

// A Node wrapper that shares the socket puts its flags back as it exits,
// making the socket blocking under a read in progress: done must not wait
// for that read, which only the client's next byte would end.
func TestPollableInputSocketDoneDoesNotWaitForABlockedRead(t *testing.T) {
	sock, peer := socketPair(t)
	in, done, pollable := pollableInput(sock)
	if !pollable {
		t.Fatal("not pollable")
	}
	rc, err := sock.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { unix.SetNonblock(int(fd), false) })
	read := make(chan struct{})
	go func() { in.Read(make([]byte, 16)); close(read) }()
	time.Sleep(50 * time.Millisecond) // the read is now blocked in the kernel

	returned := make(chan struct{})
	go func() { done(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(2 * time.Second):
		t.Error("done waited for a blocked read")
	}
	peer.WriteString("x") // ends the read
	<-read
	<-returned
}
