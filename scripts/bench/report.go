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
	section(kindTools, "the tool list and startup, through the bridge",
		"measurement\tp50 µs\tp99 µs\tmax µs\tRSS MiB\terrors\t",
		func(tw io.Writer, r row) {
			b := r.Bridge
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%s\t%d\t\n", b.Name, b.P50us, b.P99us, b.MaxUs, mib(b.MaxRSSMiB), b.Errors)
		})
	printPeerComparison(w, res, peer)
}

// printPeerComparison says how the bridge compares with the peer in the
// rows that measured both.
func printPeerComparison(w io.Writer, res *results, peer string) {
	first := true
	for _, r := range res.Rows {
		if r.Peer == nil {
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
			// Every schema differs a little, as real ones do.
			tools = append(tools, fmt.Sprintf(`{"name":%q,"title":"Filler %d v%d","description":%q,"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What to search for, in plain words (%d)."},"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"Most results to return."},"since":{"type":"string","format":"date-time"}},"required":["query"]},"annotations":{"readOnlyHint":true}}`,
				name, i, gen, strings.Repeat("Searches the user's items and returns the ones that match. ", 3), i, 100+i))
			methods = append(methods, fmt.Sprintf("%q:\"echo\"", name))
		}
		m := fmt.Sprintf(`{"id":"filler%d","name":"Filler","version":"1.0.0","tools":[%s],"implementation":{"methods":{%s}}}`, f, strings.Join(tools, ","), strings.Join(methods, ","))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("filler%02d.json", f)), []byte(m), 0o644); err != nil {
			return err
		}
	}
	return nil
}
