package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// direct calls the backend itself, on one connection.
type direct struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer // for pipelined calls
	id   int
}

func dialDirect(sock string) (*direct, error) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	return &direct{conn: conn, r: bufio.NewReaderSize(conn, 1<<20), w: bufio.NewWriter(conn)}, nil
}

func (d *direct) close() { d.conn.Close() }

// sequential makes n calls one at a time, adding their latencies to lat,
// and returns how many answered with the wrong id.
func (d *direct) sequential(params string, n int, lat *[]time.Duration) (int, error) {
	errs := 0
	for range n {
		t0 := time.Now()
		ok, err := d.echo(params)
		if err != nil {
			return 0, err
		}
		*lat = append(*lat, time.Since(t0))
		if !ok {
			errs++
		}
	}
	return errs, nil
}

// echo makes one call of the echo method with params and reports whether
// the reply answered its id.
func (d *direct) echo(params string) (bool, error) {
	d.id++
	if _, err := io.WriteString(d.conn, `{"jsonrpc":"2.0","id":`+strconv.Itoa(d.id)+`,"method":"echo","params":`+params+"}\n"); err != nil {
		return false, err
	}
	line, err := d.r.ReadBytes('\n')
	if err != nil {
		return false, err
	}
	return bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(d.id)+`,`)), nil
}

// pipelined makes n calls of the echo method with params, ahead of them
// in flight: write as many as that allows, read one response. It returns
// their latencies and how many answered an unknown id.
func (d *direct) pipelined(params string, n, ahead int) ([]time.Duration, int, error) {
	lat := make([]time.Duration, 0, n)
	starts := make(map[int]time.Time, ahead)
	errs, sent, got := 0, 0, 0
	for got < n {
		for sent < n && sent-got < ahead {
			d.id++
			starts[d.id] = time.Now()
			d.w.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(d.id) + `,"method":"echo","params":` + params + "}\n")
			sent++
		}
		if err := d.w.Flush(); err != nil {
			return nil, 0, err
		}
		line, err := d.r.ReadBytes('\n')
		if err != nil {
			return nil, 0, err
		}
		id, _ := responseID(line)
		if st, ok := starts[id]; ok {
			lat = append(lat, time.Since(st))
			delete(starts, id)
		} else {
			errs++
		}
		got++
	}
	return lat, errs, nil
}

// pipe calls the backend itself over several connections, with window
// calls in flight over them all.
type pipe []*direct

func dialPipe(sock string, conns int) (pipe, error) {
	var p pipe
	for range conns {
		d, err := dialDirect(sock)
		if err != nil {
			p.close()
			return nil, err
		}
		p = append(p, d)
	}
	return p, nil
}

func (p pipe) close() {
	for _, d := range p {
		d.close()
	}
}

// calls makes n calls with params, shared out over the connections, and
// adds their latencies to lat; it returns how many answered an unknown id.
func (p pipe) calls(params string, n int, lat *[]time.Duration) (int, error) {
	var mu sync.Mutex // guards lat, errs and firstErr
	var firstErr error
	errs := 0
	var wg sync.WaitGroup
	for k, d := range p {
		count := n / len(p)
		if k == 0 {
			count += n % len(p)
		}
		// One goroutine per connection, waited for below.
		wg.Go(func() {
			own, e, err := d.pipelined(params, count, window/len(p))
			mu.Lock()
			defer mu.Unlock()
			*lat = append(*lat, own...)
			errs += e
			if firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	return errs, firstErr
}
