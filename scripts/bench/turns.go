package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// rounds is how many turns the rows that compare sides take.
const rounds = 10

// A side is one party of a row that takes turns: the direct calls, or
// one bridge's. call makes n calls, adds their latencies to lat and
// returns how many failed verification.
type side struct {
	call func(n int, lat *[]time.Duration) (int, error)

	lat     []time.Duration
	errs    int
	wall    time.Duration // over the side's own turns
	backend time.Duration // the backend's CPU time during them
}

// turns makes n calls on each side in rounds that take turns, so that
// the machine's drift (its speed varies by a third within minutes) falls
// on every side alike. With a backend, it counts the backend's CPU time
// during each side's turns.
func turns(n int, be *backendProc, sides []*side) error {
	for r := range rounds {
		per := n / rounds
		if r == 0 {
			per += n % rounds
		}
		for _, s := range sides {
			var cpu0 time.Duration
			if be != nil {
				cpu0 = be.cpu()
			}
			t0 := time.Now()
			e, err := s.call(per, &s.lat)
			if err != nil {
				return err
			}
			s.wall += time.Since(t0)
			if be != nil {
				s.backend += be.cpu() - cpu0
			}
			s.errs += e
		}
	}
	return nil
}

// summary returns the side's stats; with throughput, its calls per
// second of its turns and the backend's CPU time per call.
func (s *side) summary(throughput bool) stats {
	if !throughput {
		return summarise("", s.lat, s.errs, 0)
	}
	st := summarise("", s.lat, s.errs, s.wall)
	if st.Calls > 0 {
		st.BackendCPUus = float64(s.backend.Microseconds()) / float64(st.Calls)
	}
	return st
}

// fresh is a set of bridge processes started for one row, so that their
// peak RSS is the row's.
type fresh struct {
	clients []*client
	cpu0    []time.Duration // each one's CPU time once it served
}

// startFresh starts the processes argvs name and waits until each serves.
func startFresh(argvs [][]string) (*fresh, error) {
	f := &fresh{}
	for _, argv := range argvs {
		c, err := ready(argv)
		if err != nil {
			f.close()
			return nil, err
		}
		cpu, _ := cpuTime(c.cmd.Process.Pid)
		f.clients, f.cpu0 = append(f.clients, c), append(f.cpu0, cpu)
	}
	return f, nil
}

// finish stops the processes and adds to each side's summary its process's
// CPU time per call and peak RSS.
func (f *fresh) finish(sides []*side, throughput bool) ([]stats, error) {
	var through []stats
	for i, c := range f.clients {
		s := sides[i].summary(throughput)
		err := c.finish(&s, f.cpu0[i])
		f.clients[i] = nil
		if err != nil {
			f.close()
			return nil, err
		}
		through = append(through, s)
	}
	return through, nil
}

// close stops the processes finish has not.
func (f *fresh) close() {
	for _, c := range f.clients {
		if c != nil {
			c.close()
		}
	}
}

// sequentialRows measures n sequential calls of l made directly and
// through each of the processes argvs start, each fresh, in turns.
func sequentialRows(sock string, l load, n int, argvs ...[]string) (direct stats, through []stats, err error) {
	d, err := dialDirect(sock)
	if err != nil {
		return stats{}, nil, err
	}
	defer d.close()
	f, err := startFresh(argvs)
	if err != nil {
		return stats{}, nil, err
	}
	defer f.close()
	sides := []*side{{call: func(n int, lat *[]time.Duration) (int, error) { return l.direct(d, n, lat) }}}
	for _, c := range f.clients {
		sides = append(sides, &side{call: func(n int, lat *[]time.Duration) (int, error) { return l.bridged(c, n, lat) }})
	}
	if err := turns(n, nil, sides); err != nil {
		return stats{}, nil, err
	}
	through, err = f.finish(sides[1:], false)
	return sides[0].summary(false), through, err
}

// pipelinedRows measures n calls with args, window of them in flight,
// made directly over conns connections to be and through each of the
// processes argvs start, each fresh, in turns. Each side's throughput is
// its calls over the time its own turns took.
func pipelinedRows(be *backendProc, args string, n, conns int, argvs ...[]string) (direct stats, through []stats, err error) {
	p, err := dialPipe(be.sock, conns)
	if err != nil {
		return stats{}, nil, err
	}
	defer p.close()
	f, err := startFresh(argvs)
	if err != nil {
		return stats{}, nil, err
	}
	defer f.close()
	sides := []*side{{call: func(n int, lat *[]time.Duration) (int, error) { return p.calls(args, n, lat) }}}
	for _, c := range f.clients {
		sides = append(sides, &side{call: func(n int, lat *[]time.Duration) (int, error) { return c.pipelined(args, n, lat) }})
	}
	if err := turns(n, be, sides); err != nil {
		return stats{}, nil, err
	}
	through, err = f.finish(sides[1:], true)
	return sides[0].summary(true), through, err
}

// cpu returns the backend's CPU time so far, summed over its threads
// from their scheduler statistics, which count nanoseconds: a turn is too
// short for the clock ticks of /proc/PID/stat.
func (p *backendProc) cpu() time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.cmd.Process.Pid))
	var sum time.Duration
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread has ended
		}
		ns, _ := strconv.ParseInt(string(b[:max(0, bytes.IndexByte(b, ' '))]), 10, 64)
		sum += time.Duration(ns)
	}
	return sum
}
