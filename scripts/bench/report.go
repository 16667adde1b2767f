package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

func printTable(w io.Writer, res *results) {
	fmt.Fprintf(w, "the bridge's stdin and stdout: %s\n", res.Stdio)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measurement\tdirect p50 µs\tbridge p50 µs\t+µs\tratio\tdirect p99 µs\tbridge p99 µs\tdirect max µs\tbridge max µs\tdirect calls/s\tbridge calls/s\tCPU µs/call\tbackend CPU µs/call\tRSS MiB\terrors\t")
	for _, r := range res.Rows {
		b := r.Bridge
		if r.Direct == nil {
			fmt.Fprintf(tw, "%s\t-\t%.0f\t-\t-\t-\t%.0f\t-\t%.0f\t-\t-\t%s\t-\t%.1f\t%d\t\n", b.Name, b.P50us, b.P99us, b.MaxUs, cpu(b), b.MaxRSSMiB, b.Errors)
			continue
		}
		d := r.Direct
		backend := "-"
		if b.BackendCPUus > 0 {
			backend = fmt.Sprintf("%.1f → %.1f", d.BackendCPUus, b.BackendCPUus)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.2f×\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%.1f\t%d\t\n", b.Name, d.P50us, b.P50us, b.P50us-d.P50us, b.P50us/d.P50us,
			d.P99us, b.P99us, d.MaxUs, b.MaxUs, rate(d.PerSecond), rate(b.PerSecond), cpu(b), backend, b.MaxRSSMiB, d.Errors+b.Errors)
	}
	tw.Flush()
}

func rate(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func cpu(s stats) string {
	if s.CPUusCall == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", s.CPUusCall)
}

func writeJSON(path string, res *results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// writeManifests writes the benchmark tool and n filler tools of realistic
// size (description, schema with several properties), 100 per file. gen
// goes into the fillers' titles: a new gen is an edit of every filler file.
func writeManifests(dir string, n, gen int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bench := `{"id":"bench","tools":[{"name":"bench.echo","description":"Echo the arguments.","inputSchema":{"type":"object","properties":{"data":{"type":"string"}},"required":["data"]}}],"implementation":{"methods":{"bench.echo":"echo"}}}`
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
