//go:build unix

package cli

import (
	"io"
	"os"
	"path/filepath"
	"testing"

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
	if err := rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

func TestPollableInputPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// A pipe from os.Pipe is non-blocking already; stdin's is not.
	if err := unix.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	in, restore := pollableInput(r)
	if in == io.Reader(r) {
		t.Fatal("a pipe was returned as it is")
	}
	if !nonblocking(t, r) {
		t.Error("the pipe is not non-blocking while served")
	}
	w.WriteString("first\n")
	buf := make([]byte, 16)
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "first\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	// A read waiting for input ends when restore closes the duplicate.
	done := make(chan error, 1)
	go func() { _, err := in.Read(buf); done <- err }()
	restore()
	if err := <-done; err == nil {
		t.Error("a waiting read returned no error after restore")
	}
	if nonblocking(t, r) {
		t.Error("the pipe is still non-blocking after restore")
	}
	// The original descriptor is still open and reads as before.
	w.WriteString("second\n")
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "second\n" {
		t.Fatalf("original read %q, %v", buf[:n], err)
	}
}

func TestPollableInputRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, restore := pollableInput(f)
	defer restore()
	if in != io.Reader(f) || nonblocking(t, f) {
		t.Error("a regular file was changed")
	}
}
