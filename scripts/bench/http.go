package main

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// concurrently makes n calls in all, each caller making one call at a
// time until n have been made, adds their latencies to lat and returns
// how many failed their checks. A failed call (not a failed check) stops
// them all.
func concurrently(callers []func() (bool, error), n int, lat *[]time.Duration) (int, error) {
	var left atomic.Int64
	left.Store(int64(n))
	var mu sync.Mutex // guards lat, errs and firstErr
	var firstErr error
	errs := 0
	var wg sync.WaitGroup
	for _, call := range callers {
		// One goroutine per caller, waited for below.
		wg.Go(func() {
			own := make([]time.Duration, 0, min(n/len(callers)+1, 1<<16))
			bad := 0
			var err error
			for left.Add(-1) >= 0 {
				t0 := time.Now()
				var ok bool
				if ok, err = call(); err != nil {
					left.Store(0) // and the others stop
					break
				}
				own = append(own, time.Since(t0))
				if !ok {
					bad++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			*lat = append(*lat, own...)
			errs += bad
			if firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	return errs, firstErr
}

// httpFleet is the servers one HTTP row measures, each with its clients.
type httpFleet struct {
	servers []*httpServer
	clients [][]*httpClient // by server
}

// startFleet starts the servers argvs name, each fresh, so that its peak
// RSS is the row's, and connects clients clients to each.
func startFleet(argvs [][]string, tools, clients int, modern bool, args string) (*httpFleet, error) {
	f := &httpFleet{}
	for _, argv := range argvs {
		s, err := startHTTP(argv, tools)
		if err != nil {
			f.close()
			return nil, err
		}
		f.servers = append(f.servers, s)
		f.clients = append(f.clients, nil)
		for range clients {
			cl, err := newHTTPClient(s.addr, modern, args)
			if err != nil {
				f.close()
				return nil, fmt.Errorf("%s: %w", argv[0], err)
			}
			f.clients[len(f.clients)-1] = append(f.clients[len(f.clients)-1], cl)
		}
	}
	return f, nil
}

// close ends the clients and stops the servers, and returns the first
// server's error.
func (f *httpFleet) close() error {
	var err error
	for i, s := range f.servers {
		for _, cl := range f.clients[i] {
			cl.close()
		}
		if serr := s.stop(); err == nil && serr != nil {
			err = fmt.Errorf("%s: %w", s.cmd.Path, serr)
		}
	}
	f.servers = nil
	return err
}

// httpRows measures calls of the echo tool with args by clients clients
// at once, each making one call at a time, n calls on each side in turns:
// directly, each client on a connection of its own to the backend, and
// through each of the servers argvs start, each client on a connection
// and (unless modern) in a session of its own.
func httpRows(be *backendProc, args string, n, clients, tools int, modern bool, argvs ...[]string) (direct stats, through []stats, err error) {
	p, err := dialPipe(be.sock, clients)
	if err != nil {
		return stats{}, nil, err
	}
	defer p.close()
	f, err := startFleet(argvs, tools, clients, modern, args)
	if err != nil {
		return stats{}, nil, err
	}
	defer f.close()
	var callers []func() (bool, error)
	for _, d := range p {
		callers = append(callers, func() (bool, error) { return d.echo(args) })
	}
	sides := []*side{{call: func(n int, lat *[]time.Duration) (int, error) { return concurrently(callers, n, lat) }}}
	for _, cls := range f.clients {
		var callers []func() (bool, error)
		for _, cl := range cls {
			callers = append(callers, cl.call)
		}
		sides = append(sides, &side{call: func(n int, lat *[]time.Duration) (int, error) { return concurrently(callers, n, lat) }})
	}
	if err := turns(n, be, sides); err != nil {
		return stats{}, nil, err
	}
	for i, s := range f.servers {
		st := sides[i+1].summary(true)
		if err := s.finish(&st); err != nil {
			return stats{}, nil, err
		}
		through = append(through, st)
	}
	return sides[0].summary(true), through, f.close()
}

// idleConns is how many connections open and end the idle sessions.
const idleConns = 8

// idleSessions opens count legacy sessions on the server, leaves them
// idle, ends them with DELETE, and measures the server's resident memory
// at rest before, with the sessions open, and after they were ended, each
// after leaving the server settle to itself. A session that DELETE did
// not find counts as an error.
func idleSessions(s *httpServer, count int, settle time.Duration) (stats, error) {
	st := stats{Idle: &idleStats{Sessions: count, SettleMs: int(settle.Milliseconds())}}
	rss := func(to *float64) error {
		time.Sleep(settle)
		kib, err := residentKiB(s.pid())
		*to = float64(kib) / 1024
		return err
	}
	if err := rss(&st.Idle.RestMiB); err != nil {
		return stats{}, err
	}
	var conns []*httpConn
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for range idleConns {
		c, err := dialHTTP(s.addr)
		if err != nil {
			return stats{}, err
		}
		conns = append(conns, c)
	}
	ids := make([][]string, len(conns)) // by connection
	err := each(conns, func(i int, c *httpConn) error {
		for range (count - i + len(conns) - 1) / len(conns) { // its share of count
			id, err := openSession(c)
			if err != nil {
				return err
			}
			ids[i] = append(ids[i], id)
		}
		return nil
	})
	if err != nil {
		return stats{}, err
	}
	if err := rss(&st.Idle.OpenMiB); err != nil {
		return stats{}, err
	}
	var unknown atomic.Int64
	err = each(conns, func(i int, c *httpConn) error {
		for _, id := range ids[i] {
			ended, err := endSession(c, id)
			if err != nil {
				return err
			}
			if !ended {
				unknown.Add(1)
			}
		}
		return nil
	})
	// The clients leave: their connections close too.
	for _, c := range conns {
		c.close()
	}
	conns = nil
	if err != nil {
		return stats{}, err
	}
	if err := rss(&st.Idle.EndedMiB); err != nil {
		return stats{}, err
	}
	st.Errors = int(unknown.Load())
	st.Idle.KiBPerSession = (st.Idle.OpenMiB - st.Idle.RestMiB) * 1024 / float64(count)
	hwm, err := peakRSS(s.pid())
	st.MaxRSSMiB = float64(hwm) / 1024
	return st, err
}

// each runs f on every connection at once and returns their errors.
func each(conns []*httpConn, f func(i int, c *httpConn) error) error {
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { errs[i] = f(i, c) }) // waited for below
	}
	wg.Wait()
	return errors.Join(errs...)
}

// idleStats is what the idle sessions row measures of a server: its
// resident memory (VmRSS) at rest, with the sessions open and idle, and
// after they were ended, each measured after the server had SettleMs to
// itself.
type idleStats struct {
	Sessions      int     `json:"sessions"`
	RestMiB       float64 `json:"rest_mib"`
	OpenMiB       float64 `json:"open_mib"`
	EndedMiB      float64 `json:"ended_mib"`
	KiBPerSession float64 `json:"kib_per_session"`
	SettleMs      int     `json:"settle_ms"`
}

// httpRow measures one HTTP row through the bridge and the peer.
func (b *bench) httpRow(be *backendProc, clients int, modern bool, args string) (row, error) {
	argvs := [][]string{b.httpCmd(be.sock)}
	if b.httpPeer != "" {
		argvs = append(argvs, b.httpPeerCmd(be.sock))
	}
	d, through, err := httpRows(be, args, b.httpCalls, clients, b.served(), modern, argvs...)
	if err != nil {
		return row{}, err
	}
	name := httpRowName(clients, modern)
	d.Name, d.Clients = name, clients
	for i := range through {
		through[i].Name, through[i].Clients = name, clients
	}
	r := row{Kind: kindHTTP, Direct: &d, Bridge: through[0]}
	if len(through) > 1 {
		r.Peer = &through[1]
	}
	return r, nil
}

// idleRow measures idle sessions on the bridge, then on the peer, each
// fresh. The bridge is allowed as many sessions as the row opens.
func (b *bench) idleRow(sock string) (row, error) {
	argvs := [][]string{append(b.httpCmd(sock), "--max-sessions", strconv.Itoa(b.idle))}
	if b.httpPeer != "" {
		argvs = append(argvs, b.httpPeerCmd(sock))
	}
	var through []stats
	for _, argv := range argvs {
		s, err := startHTTP(argv, b.served())
		if err != nil {
			return row{}, err
		}
		st, err := idleSessions(s, b.idle, b.settle)
		if serr := s.stop(); err == nil && serr != nil {
			err = fmt.Errorf("%s: %w", argv[0], serr)
		}
		if err != nil {
			return row{}, err
		}
		st.Name = b.idleRowName()
		through = append(through, st)
	}
	r := row{Kind: kindIdle, Bridge: through[0]}
	if len(through) > 1 {
		r.Peer = &through[1]
	}
	return r, nil
}
