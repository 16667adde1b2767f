package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// httpServer is a server under test serving MCP over HTTP from a child
// process: the bridge with --transport http, or the go-sdk peer.
type httpServer struct {
	cmd    *exec.Cmd
	addr   string        // host:port
	logged chan struct{} // closed once its stderr has been read to the end
	cpu0   time.Duration // its CPU time once it served
}

// serving starts the line a server prints on stderr once it listens:
// serving MCP on http://ADDR/mcp (…).
const serving = "serving MCP on http://"

// startHTTP starts the server argv runs, waits for it to listen and to
// list tools tools in a session of its own, which it then ends, and
// notes its CPU time.
func startHTTP(argv []string, tools int) (*httpServer, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, logged: make(chan struct{})}
	addrs := make(chan string, 1)
	// Reads the server's stderr until it closes: the address it serves on
	// to addrs, every other line to ours.
	go func() {
		defer close(s.logged)
		sent := false
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), serving); ok && !sent {
				addr, _, _ := strings.Cut(rest, "/")
				addrs <- addr
				sent = true
				continue
			}
			fmt.Fprintln(os.Stderr, lines.Text())
		}
		io.Copy(io.Discard, stderr) // past a line too long to scan
	}()
	select {
	case s.addr = <-addrs:
	case <-s.logged:
		return nil, fmt.Errorf("%s exited before it served: %v", argv[0], cmd.Wait())
	case <-time.After(replyWithin):
		s.stop()
		return nil, fmt.Errorf("%s did not say where it serves within %s", argv[0], replyWithin)
	}
	// A tools/list waits for the manifests to load, so that the load's
	// CPU time is not counted as the calls'.
	if err := s.listTools(tools); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	s.cpu0, _ = cpuTime(cmd.Process.Pid)
	return s, nil
}

// listTools checks that the server lists tools tools, in a session of
// its own.
func (s *httpServer) listTools(tools int) error {
	c, err := dialHTTP(s.addr)
	if err != nil {
		return err
	}
	defer c.close()
	id, err := openSession(c)
	if err != nil {
		return err
	}
	n, err := listTools(c, id)
	if err == nil && n != tools {
		err = fmt.Errorf("tools/list has %d tools, want %d", n, tools)
	}
	if ended, derr := endSession(c, id); err == nil && !ended {
		err = errors.Join(derr, errors.New("DELETE did not end the session"))
	}
	return err
}

func (s *httpServer) pid() int { return s.cmd.Process.Pid }

// finish adds to st the server's CPU time per call since it served and
// its peak RSS.
func (s *httpServer) finish(st *stats) error {
	after, err := cpuTime(s.pid())
	if err != nil {
		return err
	}
	hwm, err := peakRSS(s.pid())
	if st.Calls > 0 && after > s.cpu0 {
		st.CPUusCall = float64((after - s.cpu0).Microseconds()) / float64(st.Calls)
	}
	st.MaxRSSMiB = float64(hwm) / 1024
	return err
}

// stop asks the server to shut down, as a service manager does (SIGTERM),
// and waits for it to exit; past a grace period it kills it. Ending by
// the signal itself counts as a clean exit, as a wrapper such as perf
// record does once its work is saved.
func (s *httpServer) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { <-s.logged; exited <- s.cmd.Wait() }() // ends when the process does
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
				return nil
			}
		}
		return err
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-exited
		return fmt.Errorf("%s did not exit within 10 s of SIGTERM", s.cmd.Path)
	}
}

// residentKiB reads a running process's resident set (VmRSS, KiB) from
// /proc (Linux).
func residentKiB(pid int) (int64, error) { return procStatus(pid, "VmRSS:") }

// httpCmd is the command line of a bridge serving sock over HTTP on a
// loopback port of the system's choosing.
func (b *bench) httpCmd(sock string) []string {
	return append(b.bridgeCmd(sock), "--transport", "http", "--listen", "127.0.0.1:0")
}

// httpPeerCmd is the command line of the go-sdk peer serving sock.
func (b *bench) httpPeerCmd(sock string) []string {
	return []string{b.httpPeer, "-socket", sock, "-manifests", b.manifests, "-listen", "127.0.0.1:0"}
}
