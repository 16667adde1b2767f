package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// backendProc is the fake backend running in a child process.
type backendProc struct {
	cmd  *exec.Cmd
	sock string
}

func (p *backendProc) close() { p.cmd.Process.Kill(); p.cmd.Wait() }

// spawnBackend runs this program again as the backend on sock and waits
// for the socket to appear.
func spawnBackend(sock string, concurrent bool) (*backendProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-serve-backend", sock, fmt.Sprintf("-concurrent=%v", concurrent))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	for range 200 {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return &backendProc{cmd: cmd, sock: sock}, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("the backend did not start on %s", sock)
}

// bridgeRun starts a bridge, runs measure with a client of it, stops it
// and adds its CPU time per call and peak RSS.
func bridgeRun(argv []string, measure func(*client) (stats, error)) (stats, error) {
	c, err := ready(argv)
	if err != nil {
		return stats{}, err
	}
	before, _ := cpuTime(c.cmd.Process.Pid)
	s, err := measure(c)
	if ferr := c.finish(&s, before); err == nil {
		err = ferr
	}
	return s, err
}

// ready starts argv and returns a client once it serves.
func ready(argv []string) (*client, error) {
	c, err := startClient(argv)
	if err != nil {
		return nil, err
	}
	if _, err := c.roundTrip(initializeRequest); err != nil {
		c.close()
		return nil, err
	}
	// The manifests load in the background after initialize; a tools/list
	// waits for them, so the load's CPU time is not counted as the calls'.
	if _, err := c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// finish stops the process and adds to s its CPU time per call since
// cpu0 and its peak RSS.
func (c *client) finish(s *stats, cpu0 time.Duration) error {
	after, _ := cpuTime(c.cmd.Process.Pid)
	hwm, err := peakRSS(c.cmd.Process.Pid)
	if cerr := c.close(); err == nil {
		err = cerr
	}
	if s.Calls > 0 && after > cpu0 {
		s.CPUusCall = float64((after - cpu0).Microseconds()) / float64(s.Calls)
	}
	s.MaxRSSMiB = float64(hwm) / 1024
	return err
}

// peakRSS reads a running process's peak resident set (VmHWM, KiB) from
// /proc (Linux). getrusage's ru_maxrss is no use here: a child started
// with vfork, as Go starts them, shares the parent's memory until exec,
// and the kernel counts the parent's resident set in the child's peak.
func peakRSS(pid int) (int64, error) { return procStatus(pid, "VmHWM:") }

// procStatus reads a figure in KiB, such as "VmHWM:", from a running
// process's /proc/PID/status (Linux).
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no " + field + " in /proc/" + strconv.Itoa(pid) + "/status")
}

// cpuTime reads a process's user+system time from /proc (Linux).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}
