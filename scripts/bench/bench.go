package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const window = 64 // requests in flight in pipelined measurements

type bench struct {
	bridge, work, manifests string
	n, pipelined, tools     int
	// peer is the mcp-go peer bridge's binary (see peers/mcpgo), or ""
	// to measure without it; peerName names it in the results.
	peer, peerName string
	// rows selects the rows to run by name; nil runs them all.
	rows *regexp.Regexp
}

// benchTools is how many tools the manifests hold besides the fillers.
const benchTools = 2

// served is how many tools the bridge serves from the manifests.
func (b *bench) served() int { return b.tools + benchTools }

// stats summarises one measurement.
type stats struct {
	Name      string  `json:"name"`
	Calls     int     `json:"calls"`
	Errors    int     `json:"errors"`
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
	MaxUs     float64 `json:"max_us"`
	PerSecond float64 `json:"per_second,omitempty"`
	CPUusCall float64 `json:"cpu_us_per_call,omitempty"`
	// BackendCPUus is the backend's CPU time per call in the pipelined
	// rows: how much work the calls' traffic gives it.
	BackendCPUus float64 `json:"backend_cpu_us_per_call,omitempty"`
	// CPUmsPerMiB is the bridge's CPU time per MiB of result, in the
	// result rows.
	CPUmsPerMiB float64 `json:"cpu_ms_per_mib,omitempty"`
	MaxRSSMiB   float64 `json:"max_rss_mib,omitempty"`
}

// results pairs each bridge measurement with its direct-socket baseline.
type results struct {
	Rows  []row  `json:"rows"`
	Tools int    `json:"tools"`
	Stdio string `json:"stdio"` // what the bridge had as stdin and stdout: pipes or sockets
	// Peer names the peer bridge of the rows' Peer measurements, with
	// its version, when it ran.
	Peer string `json:"peer,omitempty"`
}

// The kinds of row, one table each in the report.
const (
	kindSequential = "sequential" // one call at a time, directly and through the bridge in turns
	kindResult     = "result"     // the same, for results of a size
	kindPipelined  = "pipelined"  // window calls in flight
	kindTools      = "tools"      // the bridge's tool list and startup, with no direct baseline
)

type row struct {
	Kind   string `json:"kind"`
	Direct *stats `json:"direct,omitempty"`
	Bridge stats  `json:"bridge"`
	// Peer is the same measurement through the peer bridge, when it ran.
	Peer *stats `json:"peer,omitempty"`
	// ResultBytes is the size of each call's result, in the result rows.
	ResultBytes int `json:"result_bytes,omitempty"`
}

func summarise(name string, lat []time.Duration, errs int, wall time.Duration) stats {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Nanoseconds()) / 1e3
	}
	s := stats{Name: name, Calls: len(lat), Errors: errs, P50us: pct(0.50), P99us: pct(0.99), MaxUs: pct(1)}
	if wall > 0 {
		s.PerSecond = float64(len(lat)) / wall.Seconds()
	}
	return s
}

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
	if _, err := c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`); err != nil {
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
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/" + strconv.Itoa(pid) + "/status")
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

// startup starts the bridge runs times and measures the time to the
// initialize response and to the first tools/list response, the moment
// a client can offer the tools to a model (both wait for the manifests
// to load: initialize to know whether to declare completions).
func (b *bench) startup(sock string, runs int) (toInit, toList stats, err error) {
	var initLat, listLat []time.Duration
	for range runs {
		t0 := time.Now()
		c, err := startClient(b.bridgeCmd(sock))
		if err != nil {
			return stats{}, stats{}, err
		}
		resp, err := c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		initLat = append(initLat, time.Since(t0))
		if err == nil && !bytes.Contains(resp, []byte(`"protocolVersion":"2025-11-25"`)) {
			err = fmt.Errorf("bad initialize response %s", resp)
		}
		if err == nil {
			c.w.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
			resp, err = c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
			listLat = append(listLat, time.Since(t0))
			if n := bytes.Count(resp, []byte(`"inputSchema"`)); err == nil && n != b.served() {
				err = fmt.Errorf("the first tools/list has %d tools, want %d", n, b.served())
			}
		}
		c.close()
		if err != nil {
			return stats{}, stats{}, err
		}
	}
	return summarise("", initLat, 0, 0), summarise("", listLat, 0, 0), nil
}

// client talks to one bridge process over its stdin and stdout. It works
// as the direct client works on the socket, on one goroutine with
// buffered reads and writes, so the two rows differ only by the bridge:
// a reader goroutine handing responses over would put a wake-up and a
// timer of the client's own into every bridged call.
type client struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	r      *bufio.Reader
	w      *bufio.Writer
	nextID int
}

// replyWithin bounds each measurement: a bridge that stops answering
// fails the run instead of hanging it.
const replyWithin = 2 * time.Minute

// bridgeCmd is the command line of a bridge serving sock.
func (b *bench) bridgeCmd(sock string) []string {
	return []string{b.bridge, "--socket", sock, "--manifests", b.manifests, "--log-level", "error"}
}

// relayCmd is the command line of this program as the do-nothing relay
// to sock (see serveRelay).
func relayCmd(sock string) ([]string, error) {
	self, err := os.Executable()
	return []string{self, "-serve-relay", sock}, err
}

// stdioSockets gives the processes under test a socket for stdin and
// another for stdout, as Node's child_process (so Claude Desktop and the
// Inspector) does, instead of pipes, as Go's os/exec and Python do.
var stdioSockets bool

func startClient(argv []string) (*client, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	var stdin io.WriteCloser
	var stdout io.Reader
	var err error
	if stdioSockets {
		var theirs []*os.File
		if stdin, stdout, theirs, err = socketStdio(); err != nil {
			return nil, err
		}
		cmd.Stdin, cmd.Stdout = theirs[0], theirs[1]
		defer theirs[0].Close()
		defer theirs[1].Close()
	} else {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &client{cmd: cmd, stdin: stdin, stdout: stdout.(*os.File), w: bufio.NewWriterSize(stdin, 256<<10),
		r: bufio.NewReaderSize(stdout, 1<<20), nextID: 1}
	c.stdout.SetReadDeadline(time.Now().Add(replyWithin))
	return c, nil
}

// responseID finds the numeric id of a response without decoding the
// line: decoding large responses would put the client's cost in the
// bridge's numbers. The bridge writes "id" right after "jsonrpc".
func responseID(line []byte) (int, bool) {
	const prefix = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, false
	}
	id, err := strconv.Atoi(string(rest[:end]))
	return id, err == nil
}

// send writes one request with the next id, which it returns, and
// flushes if asked.
func (c *client) send(request func(id int) string, flush bool) (int, error) {
	id := c.nextID
	c.nextID++
	c.w.WriteString(request(id))
	c.w.WriteByte('\n')
	if flush {
		return id, c.w.Flush()
	}
	return id, nil
}

// next reads the next response, skipping notifications.
func (c *client) next() (int, []byte, error) {
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the bridge closed its output")
			}
			return 0, nil, err
		}
		if id, ok := responseID(line); ok {
			return id, line, nil
		}
	}
}

// call sends one request and reads its response.
func (c *client) call(request func(id int) string) ([]byte, error) {
	id, err := c.send(request, true)
	if err != nil {
		return nil, err
	}
	got, resp, err := c.next()
	if err == nil && got != id {
		err = fmt.Errorf("response to id %d, want %d", got, id)
	}
	return resp, err
}

// roundTrip sends line, a request with any id, and reads its response.
func (c *client) roundTrip(line string) ([]byte, error) {
	var req map[string]any
	json.Unmarshal([]byte(line), &req)
	return c.call(func(id int) string {
		req["id"] = id
		b, _ := json.Marshal(req)
		return string(b)
	})
}

func callLine(args string) func(int) string {
	return func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"tairseach_bench_echo","arguments":` + args + `}}`
	}
}

// verifyCall checks a tools/call response: no error, the payload echoed.
func verifyCall(resp []byte, args string) bool {
	return !bytes.Contains(resp, []byte(`"isError":true`)) && !bytes.Contains(resp, []byte(`"error":{`)) &&
		bytes.Contains(resp, []byte(`"structuredContent":{"echo":`+args+`}`))
}

// sequential makes n calls one at a time, adding their latencies to lat,
// and returns how many failed verification.
func (c *client) sequential(args string, n int, lat *[]time.Duration) (int, error) {
	c.stdout.SetReadDeadline(time.Now().Add(replyWithin))
	errs := 0
	request := callLine(args)
	for range n {
		t0 := time.Now()
		resp, err := c.call(request)
		if err != nil {
			return 0, err
		}
		*lat = append(*lat, time.Since(t0))
		if !verifyCall(resp, args) {
			errs++
		}
	}
	return errs, nil
}

// pipelined makes n calls with args, window of them in flight, as pipe
// does on one connection: write as many as the window allows, read one
// response. It adds their latencies to lat and returns how many failed
// verification.
func (c *client) pipelined(args string, n int, lat *[]time.Duration) (int, error) {
	c.stdout.SetReadDeadline(time.Now().Add(replyWithin))
	starts := make(map[int]time.Time, window)
	request := callLine(args)
	errs, sent, got := 0, 0, 0
	for got < n {
		for sent < n && sent-got < window {
			id, _ := c.send(request, false)
			starts[id] = time.Now()
			sent++
		}
		if err := c.w.Flush(); err != nil {
			return 0, err
		}
		id, resp, err := c.next()
		if err != nil {
			return 0, err
		}
		if st, ok := starts[id]; ok {
			*lat = append(*lat, time.Since(st))
			delete(starts, id)
			if !verifyCall(resp, args) {
				errs++
			}
		} else {
			errs++ // an unknown or repeated id
		}
		got++
	}
	return errs + len(starts), nil // and those never answered
}

func (c *client) toolsList(n, wantTools int) (stats, error) {
	c.stdout.SetReadDeadline(time.Now().Add(replyWithin))
	lat := make([]time.Duration, 0, n)
	errs := 0
	request := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list"}`
	}
	for range n {
		t0 := time.Now()
		resp, err := c.call(request)
		if err != nil {
			return stats{}, err
		}
		lat = append(lat, time.Since(t0))
		if bytes.Count(resp, []byte(`"inputSchema"`)) != wantTools {
			errs++
		}
	}
	return summarise("", lat, errs, 0), nil
}

func (c *client) close() error {
	c.w.Flush()
	c.stdin.Close()
	io.Copy(io.Discard, c.r) // all of stdout before Wait closes the pipe
	return c.cmd.Wait()
}

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
		d.id++
		t0 := time.Now()
		if _, err := io.WriteString(d.conn, `{"jsonrpc":"2.0","id":`+strconv.Itoa(d.id)+`,"method":"echo","params":`+params+"}\n"); err != nil {
			return 0, err
		}
		line, err := d.r.ReadBytes('\n')
		if err != nil {
			return 0, err
		}
		*lat = append(*lat, time.Since(t0))
		if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(d.id)+`,`)) {
			errs++
		}
	}
	return errs, nil
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

// How long duringReloads calls, and how often it edits the manifests
// meanwhile (the bridge waits 100 ms for edits to stop, then reloads).
const (
	reloadingFor = 4 * time.Second
	reloadEvery  = 250 * time.Millisecond
)

// duringReloads measures sequential calls with args, made directly and
// through a bridge in turns, while every filler manifest is edited every
// reloadEvery, so the bridge reloads them all while it serves. The
// bridge's tool list must show the last edit at the end.
func (b *bench) duringReloads(sock, args string) (direct, bridged stats, err error) {
	dir := filepath.Join(b.work, "reloading")
	if err := writeManifests(dir, b.tools, 0); err != nil {
		return stats{}, stats{}, err
	}
	d, err := dialDirect(sock)
	if err != nil {
		return stats{}, stats{}, err
	}
	defer d.close()
	argv := b.bridgeCmd(sock)
	argv[slices.Index(argv, b.manifests)] = dir
	c, err := ready(argv)
	if err != nil {
		return stats{}, stats{}, err
	}
	cpu0, _ := cpuTime(c.cmd.Process.Pid)

	stop, edits := make(chan struct{}), make(chan error, 1)
	gen := 0
	go func() {
		tick := time.NewTicker(reloadEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				edits <- nil
				return
			case <-tick.C:
			}
			if err := writeManifests(dir, b.tools, gen+1); err != nil {
				edits <- err
				return
			}
			gen++
		}
	}()
	var dLat, bLat []time.Duration
	dErrs, bErrs := 0, 0
	for end := time.Now().Add(reloadingFor); time.Now().Before(end); {
		e, err := d.sequential(args, 1, &dLat)
		if err != nil {
			close(stop)
			return stats{}, stats{}, err
		}
		dErrs += e
		if e, err = c.sequential(args, 1, &bLat); err != nil {
			close(stop)
			return stats{}, stats{}, err
		}
		bErrs += e
	}
	close(stop)
	if err := <-edits; err != nil {
		return stats{}, stats{}, err
	}
	// The last edit is in the list once the bridge has reloaded it.
	want := fmt.Sprintf(`Filler 0 v%d"`, gen)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		list, err := c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
		if err != nil {
			return stats{}, stats{}, err
		}
		if bytes.Contains(list, []byte(want)) {
			break
		}
		if time.Now().After(deadline) {
			bErrs++ // the bridge did not pick up the last edit
			break
		}
	}
	name := fmt.Sprintf("sequential call, 100 B, during %d reloads of %d tools", gen, b.tools)
	direct = summarise(name, dLat, dErrs, 0)
	bridged = summarise(name, bLat, bErrs, 0)
	err = c.finish(&bridged, cpu0)
	bridged.CPUusCall = 0 // most of it is the reloads'
	return direct, bridged, err
}
