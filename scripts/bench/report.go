package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// printTable prints the results as one table for each kind of row, the
// peer's measurements under the bridge's, and how the two compare.
func printTable(w io.Writer, res *results) {
	fmt.Fprintf(w, "the bridge's stdin and stdout: %s\n", res.Stdio)
	peer := res.Peer
	if peer == "" {
		peer = "peer"
	}
	section := func(kind, title, header string, line func(tw io.Writer, r row)) {
		if !slices.ContainsFunc(res.Rows, func(r row) bool { return r.Kind == kind }) {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, header)
		for _, r := range res.Rows {
			if r.Kind == kind {
				line(tw, r)
			}
		}
		tw.Flush()
	}
	section(kindSequential, "sequential calls, directly and through the bridge in turns",
		"measurement\tdirect p50 µs\tbridge p50 µs\t+µs\tratio\tdirect p99 µs\tbridge p99 µs\tdirect max µs\tbridge max µs\tCPU µs/call\tRSS MiB\terrors\t",
		func(tw io.Writer, r row) {
			d, b := r.Direct, r.Bridge
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%.1f\t%d\t\n", b.Name, d.P50us, b.P50us, b.P50us-d.P50us, ratio(b.P50us, d.P50us),
				d.P99us, b.P99us, d.MaxUs, b.MaxUs, cpu(b.CPUusCall), b.MaxRSSMiB, d.Errors+b.Errors)
		})
	section(kindResult, "results of a size, directly and through each bridge in turns (ratio: p50 ÷ direct p50; each bridge fresh, so its peak RSS is the row's)",
		"measurement\tthrough\tcalls\tdirect p50 ms\tp50 ms\tratio\tdirect p99 ms\tp99 ms\tCPU ms/call\tCPU ms/MiB\tRSS MiB\tRSS ÷ size\terrors\t",
		func(tw io.Writer, r row) {
			d := r.Direct
			size := float64(r.ResultBytes) / (1 << 20)
			line := func(name, through string, s stats, errs int) {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.1f\t%.1f×\t%d\t\n", name, through, s.Calls, d.P50us/1e3, s.P50us/1e3, ratio(s.P50us, d.P50us),
					d.P99us/1e3, s.P99us/1e3, s.CPUusCall/1e3, s.CPUmsPerMiB, s.MaxRSSMiB, s.MaxRSSMiB/size, errs)
			}
			line(r.Bridge.Name, "tairseach-mcp", r.Bridge, d.Errors+r.Bridge.Errors)
			if r.Peer != nil {
				line("", peer, *r.Peer, r.Peer.Errors)
			}
		})
	section(kindPipelined, fmt.Sprintf("pipelined calls, %d in flight, directly and through each bridge in turns", window),
		"measurement\tthrough\tdirect calls/s\tcalls/s\t÷ direct\tp50 µs\tp99 µs\tmax µs\tCPU µs/call\tbackend CPU µs/call\tRSS MiB\terrors\t",
		func(tw io.Writer, r row) {
			d := r.Direct
			line := func(name, through string, s stats, errs int) {
				fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\t%.0f\t%.0f\t%.0f\t%s\t%.1f → %.1f\t%.1f\t%d\t\n", name, through, d.PerSecond, s.PerSecond, ratio(s.PerSecond, d.PerSecond),
					s.P50us, s.P99us, s.MaxUs, cpu(s.CPUusCall), d.BackendCPUus, s.BackendCPUus, s.MaxRSSMiB, errs)
			}
			line(r.Bridge.Name, "tairseach-mcp", r.Bridge, d.Errors+r.Bridge.Errors)
			if r.Peer != nil {
				line("", peer, *r.Peer, r.Peer.Errors)
			}
		})
	httpPeer := res.HTTPPeer
	if httpPeer == "" {
		httpPeer = "peer"
	}
	section(kindHTTP, "MCP over HTTP: concurrent clients, each making one call at a time on a connection of its own (in a session of its own unless stateless), directly and through each server in turns",
		"measurement\tthrough\tcalls/s\t÷ direct\tp50 µs\tp99 µs\tmax µs\tserver CPU µs/call\tclient CPU µs/call\tbackend CPU µs/call\tRSS MiB\terrors\t",
		func(tw io.Writer, r row) {
			d := r.Direct
			line := func(name, through string, s stats, server string) {
				fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%.0f\t%.0f\t%.0f\t%s\t%.1f\t%.1f\t%s\t%d\t\n", name, through, s.PerSecond, ratio(s.PerSecond, d.PerSecond),
					s.P50us, s.P99us, s.MaxUs, server, s.ClientCPUus, s.BackendCPUus, mib(s.MaxRSSMiB), s.Errors)
			}
			line(r.Bridge.Name, "direct", *d, "-")
			line("", "tairseach-mcp", r.Bridge, cpu(r.Bridge.CPUusCall))
			if r.Peer != nil {
				line("", httpPeer, *r.Peer, cpu(r.Peer.CPUusCall))
			}
		})
	section(kindIdle, "idle sessions over HTTP: each server's resident memory (VmRSS) at rest, with the sessions open, and after DELETE ended them",
		"measurement\tthrough\tat rest MiB\twith them MiB\tKiB/session\tended MiB\tsettled for\tpeak RSS MiB\terrors\t",
		func(tw io.Writer, r row) {
			line := func(name, through string, s stats) {
				i := s.Idle
				fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%.1f\t%d\t\n", name, through, i.RestMiB, i.OpenMiB, i.KiBPerSession, i.EndedMiB,
					time.Duration(i.SettleMs)*time.Millisecond, s.MaxRSSMiB, s.Errors)
			}
			line(r.Bridge.Name, "tairseach-mcp", r.Bridge)
			if r.Peer != nil {
				line("", httpPeer, *r.Peer)
			}
		})
	section(kindTools, "the tool list and startup, through the bridge",
		"measurement\tp50 µs\tp99 µs\tmax µs\tRSS MiB\terrors\t",
		func(tw io.Writer, r row) {
			b := r.Bridge
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%s\t%d\t\n", b.Name, b.P50us, b.P99us, b.MaxUs, mib(b.MaxRSSMiB), b.Errors)
		})
	printPeerComparison(w, res, peer, kindResult, kindPipelined)
	printPeerComparison(w, res, httpPeer, kindHTTP, kindIdle)
}

// printPeerComparison says how the bridge compares with the peer in the
// rows of the kinds given that measured both.
func printPeerComparison(w io.Writer, res *results, peer string, kinds ...string) {
	first := true
	for _, r := range res.Rows {
		if r.Peer == nil || !slices.Contains(kinds, r.Kind) {
			continue
		}
		if first {
			fmt.Fprintf(w, "\ntairseach-mcp against %s, in the same rows:\n", peer)
			first = false
		}
		b, p := r.Bridge, *r.Peer
		switch r.Kind {
		case kindResult:
			fmt.Fprintf(w, "  %s: p50 %s its, CPU per MiB %s its, peak RSS %.1f against %.1f MiB\n", r.Bridge.Name, ratio(b.P50us, p.P50us), ratio(b.CPUmsPerMiB, p.CPUmsPerMiB), b.MaxRSSMiB, p.MaxRSSMiB)
		case kindPipelined:
			fmt.Fprintf(w, "  %s: %s its calls/s, peak RSS %.1f against %.1f MiB\n", r.Bridge.Name, ratio(b.PerSecond, p.PerSecond), b.MaxRSSMiB, p.MaxRSSMiB)
		case kindHTTP:
			fmt.Fprintf(w, "  %s: %s its calls/s, p99 %.1f against %.1f ms, server CPU per call %s its, peak RSS %.1f against %.1f MiB\n", r.Bridge.Name, ratio(b.PerSecond, p.PerSecond),
				b.P99us/1e3, p.P99us/1e3, ratio(b.CPUusCall, p.CPUusCall), b.MaxRSSMiB, p.MaxRSSMiB)
		case kindIdle:
			fmt.Fprintf(w, "  %s: %.1f against %.1f KiB per session; %.1f against %.1f MiB once ended, from %.1f and %.1f at rest\n", r.Bridge.Name, b.Idle.KiBPerSession, p.Idle.KiBPerSession,
				b.Idle.EndedMiB, p.Idle.EndedMiB, b.Idle.RestMiB, p.Idle.RestMiB)
		}
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func cpu(us float64) string {
	if us == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", us)
}

func mib(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func writeJSON(path string, res *results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// writeManifests writes the benchmark tools (benchTools of them) and n
// filler tools of realistic size (description, schema with several
// properties), 100 per file. gen goes into the fillers' titles: a new gen
// is an edit of every filler file.
func writeManifests(dir string, n, gen int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bench := `{"id":"bench","tools":[` +
		`{"name":"bench.echo","description":"Echo the arguments.","inputSchema":{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}},` +
		`{"name":"bench.payload","description":"Answer {\"data\": \"<size bytes>\"}.","inputSchema":{"type":"object","properties":{"size":{"type":"integer","minimum":0}},"required":["size"]}}` +
		`],"implementation":{"methods":{"bench.echo":"echo","bench.payload":"payload"}}}`
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), []byte(bench), 0o644); err != nil {
		return err
	}
	for f := 0; f*100 < n; f++ {
		var tools, methods []string
		for i := f * 100; i < min(n, (f+1)*100); i++ {
			name := fmt.Sprintf("filler%d.tool_%04d", f, i)
			tools = append(tools, fillerTool(name, i, gen))
			methods = append(methods, fmt.Sprintf("%q:\"echo\"", name))
		}
		m := fmt.Sprintf(`{"id":"filler%d","name":"Filler","version":"1.0.0","tools":[%s],"implementation":{"methods":{%s}}}`, f, strings.Join(tools, ","), strings.Join(methods, ","))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("filler%02d.json", f)), []byte(m), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fillerTool is the filler tool i called name, of realistic size, whose
// title says gen. Every schema differs a little, as real ones do.
func fillerTool(name string, i, gen int) string {
	return fmt.Sprintf(`{"name":%q,"title":"Filler %d v%d","description":%q,"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What to search for, in plain words (%d)."},"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"Most results to return."},"since":{"type":"string","format":"date-time"}},"required":["query"]},"annotations":{"readOnlyHint":true}}`,
		name, i, gen, strings.Repeat("Searches the user's items and returns the ones that match. ", 3), i, 100+i)
}
