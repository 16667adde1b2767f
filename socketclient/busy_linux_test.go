//go:build linux

package socketclient

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listenBacklog listens on a fresh socket whose queue of connections
// waiting to be accepted holds at most backlog+1 of them (Linux counts
// one more than asked); net.Listen would ask for the system's maximum.
func listenBacklog(t *testing.T, backlog int) (string, *net.UnixListener) {
	t.Helper()
	path := filepath.Join(shortTempDir(t), "busy.sock")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close() // FileListener works on a copy
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		t.Fatal(err)
	}
	l, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	ln := l.(*net.UnixListener)
	t.Cleanup(func() { ln.Close() })
	return path, ln
}

// fillQueue connects to path until the listener's queue is full, and
// keeps those connections open until the test ends.
func fillQueue(t *testing.T, path string) {
	t.Helper()
	for {
		nc, err := net.Dial("unix", path)
		if errors.Is(err, unix.EAGAIN) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
	}
}

func TestABurstWaitsForItsTurnInAFullAcceptQueue(t *testing.T) {
	t.Parallel()
	path, ln := listenBacklog(t, 0)
	var served sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		served.Wait()
	})
	served.Add(1)
	// The backend accepts one connection at a time, as a busy one does,
	// until the cleanup closes the listener; each connection is answered
	// until the client hangs up.
	go func() {
		defer served.Done()
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			served.Add(1)
			go func() {
				defer served.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for answer(c, r, `"ok"`) {
				}
			}()
			time.Sleep(time.Millisecond) // the pace of a slow backend, not a wait for anything
		}
	}()
	const burst = 64
	c := newClient(t, path, &Options{PoolSize: burst, DialTimeout: 30 * time.Second})
	var wg sync.WaitGroup
	errs := make(chan error, burst)
	for range burst {
		wg.Go(func() {
			if _, err := c.Call(callCtx(t, 30*time.Second), "m", nil, nil); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed == 0 {
			t.Errorf("a call failed: %v", err)
		}
		failed++
	}
	if failed > 0 {
		t.Errorf("%d of %d calls failed against a backend that accepts them all, slowly", failed, burst)
	}
}

func TestAQueueThatStaysFullIsBusyNotDown(t *testing.T) {
	t.Parallel()
	path, _ := listenBacklog(t, 0) // never accepts
	fillQueue(t, path)
	const dialTimeout = 100 * time.Millisecond
	c := newClient(t, path, &Options{DialTimeout: dialTimeout})
	start := time.Now()
	_, err := c.Call(callCtx(t, 30*time.Second), "m", nil, nil)
	if !errors.Is(err, ErrBusy) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrBusy and not ErrUnavailable", err)
	}
	if want := "backend busy at " + path + ": it accepted no connection within 100ms"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want it to start %q", err, want)
	}
	if waited := time.Since(start); waited < dialTimeout {
		t.Errorf("gave up after %v, before the dial timeout of %v: it did not try again", waited, dialTimeout)
	}
	if err := c.Check(callCtx(t, 30*time.Second)); !errors.Is(err, ErrBusy) {
		t.Errorf("Check = %v, want ErrBusy", err)
	}
}

func TestACallEndingWhileTheQueueIsFullSaysWhy(t *testing.T) {
	t.Parallel()
	path, _ := listenBacklog(t, 0)
	fillQueue(t, path)
	c := newClient(t, path, &Options{DialTimeout: time.Hour})
	_, err := c.Call(callCtx(t, 50*time.Millisecond), "m", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBusy) {
		t.Errorf("err = %v, want the context's error", err)
	}
}
