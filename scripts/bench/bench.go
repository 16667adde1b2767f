package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

const window = 64 // requests in flight in pipelined measurements

type bench struct {
	bridge, work, manifests string
	n, pipelined, tools     int
	// many is how many manifest files the rows of many manifests write.
	many int
	// httpCalls is how many calls each side of an HTTP row makes; idle
	// how many sessions the idle sessions row opens, and settle how long
	// it leaves a server to itself before each look at its memory.
	httpCalls, idle int
	settle          time.Duration
	// peer is the mcp-go peer bridge's binary (see peers/mcpgo), or ""
	// to measure without it; peerName names it in the results. httpPeer
	// and httpPeerName are the go-sdk peer's, for the HTTP rows (see
	// peers/gosdk).
	peer, peerName         string
	httpPeer, httpPeerName string
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
	// Clients is how many clients made calls at once, in the HTTP rows.
	Clients int `json:"clients,omitempty"`
	// ClientCPUus is the client's own CPU time per call (this process's:
	// the load generator's), in the rows of throughput (pipelined, HTTP).
	ClientCPUus float64 `json:"client_cpu_us_per_call,omitempty"`
	// Idle is the idle sessions row's measurement.
	Idle *idleStats `json:"idle,omitempty"`
}

// results pairs each bridge measurement with its direct-socket baseline.
type results struct {
	Rows  []row  `json:"rows"`
	Tools int    `json:"tools"`
	Stdio string `json:"stdio"` // what the bridge had as stdin and stdout: pipes or sockets
	// Peer names the peer bridge of the stdio rows' Peer measurements,
	// with its version, when it ran.
	Peer string `json:"peer,omitempty"`
	// HTTPPeer names the peer server of the HTTP rows' Peer
	// measurements, with its version, when it ran.
	HTTPPeer string `json:"http_peer,omitempty"`
}

// The kinds of row, one table each in the report.
const (
	kindSequential = "sequential" // one call at a time, directly and through the bridge in turns
	kindResult     = "result"     // the same, for results of a size
	kindPipelined  = "pipelined"  // window calls in flight
	kindHTTP       = "http"       // concurrent clients over HTTP, each one call at a time
	kindIdle       = "idle"       // idle sessions over HTTP: resident memory, with no direct baseline
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

// startup starts the bridge runs times and measures the time to the
// initialize response and to the first tools/list response, the moment
// a client can offer the tools to a model (which waits for the
// manifests to load; initialize does not).
func (b *bench) startup(sock string, runs int) (toInit, toList stats, err error) {
	var initLat, listLat []time.Duration
	for range runs {
		t0 := time.Now()
		c, err := startClient(b.bridgeCmd(sock))
		if err != nil {
			return stats{}, stats{}, err
		}
		resp, err := c.roundTrip(initializeRequest)
		initLat = append(initLat, time.Since(t0))
		if err == nil && !bytes.Contains(resp, []byte(`"protocolVersion":"2025-11-25"`)) {
			err = fmt.Errorf("bad initialize response %s", resp)
		}
		if err == nil {
			c.w.WriteString(initializedNotification + "\n")
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
