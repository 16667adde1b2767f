package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The names of the rows that do not depend on the run's options; -rows
// selects rows by name.
const (
	rowCall100 = "sequential call, 100 B"
	rowRelay   = "sequential call, 100 B, do-nothing relay"
	rowCall64K = "sequential call, 64 KiB"
)

func pipelinedRowName(concurrent bool) string {
	if concurrent {
		return "pipelined ×64, concurrent backend"
	}
	return "pipelined ×64, sequential backend"
}

// reloadsRowName is the reloads row's name as -rows sees it; the results
// add how many reloads there were.
func (b *bench) reloadsRowName() string {
	return fmt.Sprintf("sequential call, 100 B, during reloads of %d tools", b.tools)
}

// httpClients are the numbers of concurrent clients of the HTTP rows.
var httpClients = []int{1, 8, 64}

// modernClients is how many clients the HTTP row of the modern era has.
const modernClients = 64

func httpRowName(clients int, modern bool) string {
	name := fmt.Sprintf("HTTP, %d clients", clients)
	if clients == 1 {
		name = "HTTP, 1 client"
	}
	if modern {
		return name + ", " + modernVersion + " stateless"
	}
	return name + ", a session each"
}

func (b *bench) idleRowName() string { return fmt.Sprintf("HTTP, %d idle sessions", b.idle) }

func (b *bench) listRowName() string { return fmt.Sprintf("tools/list, %d tools", b.served()) }

func (b *bench) initRowName() string {
	return fmt.Sprintf("start to initialize response, %d tools", b.served())
}

func (b *bench) firstListRowName() string {
	return fmt.Sprintf("start to first tools/list response, %d tools", b.served())
}

// rowNames lists every row's name, in the order they run.
func (b *bench) rowNames() []string {
	names := []string{rowCall100, rowRelay, rowCall64K, b.reloadsRowName()}
	for _, size := range resultSizes {
		names = append(names, resultRowName(size))
	}
	names = append(names, pipelinedRowName(true), pipelinedRowName(false))
	for _, clients := range httpClients {
		names = append(names, httpRowName(clients, false))
	}
	names = append(names, httpRowName(modernClients, true), b.idleRowName())
	return append(names, b.listRowName(), b.initRowName(), b.firstListRowName(), b.manyStartRowName(), b.stormRowName())
}

// want reports whether -rows selects the row called name.
func (b *bench) want(name string) bool { return b.rows == nil || b.rows.MatchString(name) }

// wantsPeer reports whether a selected row measures the mcp-go peer.
func (b *bench) wantsPeer() bool {
	return slices.ContainsFunc(b.rowNames(), func(name string) bool {
		return b.want(name) && (strings.HasPrefix(name, "result of") || strings.HasPrefix(name, "pipelined"))
	})
}

// wantsHTTPPeer reports whether a selected row measures the go-sdk peer.
func (b *bench) wantsHTTPPeer() bool {
	return slices.ContainsFunc(b.rowNames(), func(name string) bool { return b.want(name) && strings.HasPrefix(name, "HTTP") })
}

func (b *bench) runAll() (*results, error) {
	res := &results{Tools: b.tools, Stdio: "pipes", Peer: b.peerName, HTTPPeer: b.httpPeerName}
	if stdioSockets {
		res.Stdio = "sockets"
	}
	bs := &backends{work: b.work}
	defer bs.close()
	small := `{"data":"` + strings.Repeat("a", 100-11) + `"}`
	large := `{"data":"` + strings.Repeat("b", 64<<10-11) + `"}`

	if b.want(rowCall100) || b.want(rowRelay) {
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		var argvs [][]string
		var names []string
		if b.want(rowCall100) {
			argvs, names = append(argvs, b.bridgeCmd(be.sock)), append(names, rowCall100)
		}
		if b.want(rowRelay) {
			// The 100 B row's floor: what any process between client and
			// backend costs here (see serveRelay).
			relay, err := relayCmd(be.sock)
			if err != nil {
				return nil, err
			}
			argvs, names = append(argvs, relay), append(names, rowRelay)
		}
		d, through, err := sequentialRows(be.sock, echoLoad(small), b.n, argvs...)
		if err != nil {
			return nil, err
		}
		d.Name = rowCall100
		for i := range through {
			through[i].Name = names[i]
			res.Rows = append(res.Rows, row{Kind: kindSequential, Direct: &d, Bridge: through[i]})
		}
	}
	if b.want(rowCall64K) {
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		d, through, err := sequentialRows(be.sock, echoLoad(large), b.n, b.bridgeCmd(be.sock))
		if err != nil {
			return nil, err
		}
		d.Name, through[0].Name = rowCall64K, rowCall64K
		res.Rows = append(res.Rows, row{Kind: kindSequential, Direct: &d, Bridge: through[0]})
	}
	if b.want(b.reloadsRowName()) {
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		d, br, err := b.duringReloads(be.sock, small)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row{Kind: kindSequential, Direct: &d, Bridge: br})
	}
	for _, size := range resultSizes {
		if !b.want(resultRowName(size)) {
			continue
		}
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		r, err := b.resultRow(be.sock, size)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, r)
	}
	for _, concurrent := range []bool{true, false} {
		if !b.want(pipelinedRowName(concurrent)) {
			continue
		}
		be, err := bs.get(concurrent)
		if err != nil {
			return nil, err
		}
		r, err := b.pipelinedRow(be, concurrent, small)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, r)
	}
	// The HTTP rows call a backend that answers one request at a time per
	// connection, as the real one does; the servers keep a pool.
	for _, modern := range []bool{false, true} {
		counts := httpClients
		if modern {
			counts = []int{modernClients}
		}
		for _, clients := range counts {
			if !b.want(httpRowName(clients, modern)) {
				continue
			}
			be, err := bs.get(false)
			if err != nil {
				return nil, err
			}
			r, err := b.httpRow(be, clients, modern, small)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, r)
		}
	}
	if b.want(b.idleRowName()) {
		be, err := bs.get(false)
		if err != nil {
			return nil, err
		}
		r, err := b.idleRow(be.sock)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, r)
	}
	if b.want(b.listRowName()) {
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		list, err := bridgeRun(b.bridgeCmd(be.sock), func(c *client) (stats, error) { return c.toolsList(200, b.served()) })
		if err != nil {
			return nil, err
		}
		list.Name = b.listRowName()
		res.Rows = append(res.Rows, row{Kind: kindTools, Bridge: list})
	}
	if b.want(b.initRowName()) || b.want(b.firstListRowName()) {
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		toInit, toList, err := b.startup(be.sock, 15)
		if err != nil {
			return nil, err
		}
		toInit.Name, toList.Name = b.initRowName(), b.firstListRowName()
		if b.want(toInit.Name) {
			res.Rows = append(res.Rows, row{Kind: kindTools, Bridge: toInit})
		}
		if b.want(toList.Name) {
			res.Rows = append(res.Rows, row{Kind: kindTools, Bridge: toList})
		}
	}
	if b.want(b.manyStartRowName()) {
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		s, err := b.manyStartup(be.sock, manyStarts)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row{Kind: kindTools, Bridge: s})
	}
	if b.want(b.stormRowName()) {
		be, err := bs.get(true)
		if err != nil {
			return nil, err
		}
		s, err := b.storm(be.sock)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row{Kind: kindTools, Bridge: s})
	}
	return res, nil
}

// resultRow measures calls whose results are size bytes, directly and
// through a fresh bridge (and peer), so that the bridge's peak RSS is
// this row's.
func (b *bench) resultRow(sock string, size int) (row, error) {
	argvs := [][]string{b.bridgeCmd(sock)}
	if b.peer != "" {
		argvs = append(argvs, b.peerCmd(sock))
	}
	d, through, err := sequentialRows(sock, resultLoad(size), resultCalls(b.n, size), argvs...)
	if err != nil {
		return row{}, err
	}
	name := resultRowName(size)
	for i := range through {
		through[i].Name = name
		through[i].CPUmsPerMiB = through[i].CPUusCall / 1e3 / (float64(size) / (1 << 20))
	}
	d.Name = name
	r := row{Kind: kindResult, Direct: &d, Bridge: through[0], ResultBytes: size}
	if len(through) > 1 {
		r.Peer = &through[1]
	}
	return r, nil
}

// pipelinedRow measures pipelined calls with args directly and through
// the bridge (and the peer) in turns. The direct calls use one
// connection to a concurrent backend and 16 (the bridge's default pool)
// to a sequential one.
func (b *bench) pipelinedRow(be *backendProc, concurrent bool, args string) (row, error) {
	conns := 1
	if !concurrent {
		conns = 16
	}
	argvs := [][]string{b.bridgeCmd(be.sock)}
	if b.peer != "" {
		argvs = append(argvs, b.peerCmd(be.sock))
	}
	d, through, err := pipelinedRows(be, args, b.pipelined, conns, argvs...)
	if err != nil {
		return row{}, err
	}
	name := pipelinedRowName(concurrent)
	d.Name = name
	for i := range through {
		through[i].Name = name
	}
	r := row{Kind: kindPipelined, Direct: &d, Bridge: through[0]}
	if len(through) > 1 {
		r.Peer = &through[1]
	}
	return r, nil
}

// backends spawns the fake backends as the rows need them, one of each
// mode, and closes them.
type backends struct {
	work  string
	procs map[bool]*backendProc
}

func (bs *backends) get(concurrent bool) (*backendProc, error) {
	if p, ok := bs.procs[concurrent]; ok {
		return p, nil
	}
	p, err := spawnBackend(filepath.Join(bs.work, fmt.Sprintf("b%v.sock", concurrent)), concurrent)
	if err != nil {
		return nil, err
	}
	if bs.procs == nil {
		bs.procs = make(map[bool]*backendProc)
	}
	bs.procs[concurrent] = p
	return p, nil
}

func (bs *backends) close() {
	for _, p := range bs.procs {
		p.close()
	}
}
