//go:build unix

package main

// The fault table: one row per class of hostile input, each run against
// the built binary with the bound it must stay within (the bridge's CPU
// time, its peak RSS, and the time to answer everything) and the figure
// measured, logged with -v. docs/reliability.md keeps the table.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// hostileManifest has schemas that make the schema library's work grow
// fast with its input: bounds on numbers, and recursion.
const hostileManifest = `{"id":"h","tools":[
 {"name":"h.bounded","description":"A bounded number.","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":100}}}},
 {"name":"h.tree","description":"A recursive shape.",
  "inputSchema":{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"c":{"$ref":"#/$defs/node"}},"additionalProperties":false}}},
  "outputSchema":{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"c":{"$ref":"#/$defs/node"}},"additionalProperties":false}}}},
 {"name":"h.big","description":"A large reply.","inputSchema":{"type":"object"}},
 {"name":"h.mail","description":"An address.","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"c":{"type":"string","format":"email"}}}},
 {"name":"h.hang","description":"Never answered.","inputSchema":{"type":"object"}}
],"implementation":{"methods":{"h.bounded":"h.bounded","h.tree":"h.tree","h.big":"h.big","h.mail":"h.mail","h.hang":"h.hang"}}}`

func hostileBackend(t *testing.T) *sockettest.Server {
	return sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		switch req.Method {
		case "h.tree":
			return jsontext.Value(deepObject("c", 2000, "{}")), nil
		case "h.mail":
			return map[string]string{"c": strings.Repeat("v", 5<<20)}, nil
		case "h.big":
			return map[string]string{"data": strings.Repeat("b", 30<<20)}, nil
		case "h.hang":
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return map[string]bool{"ok": true}, nil
	})
}

func deepObject(key string, depth int, leaf string) string {
	return strings.Repeat(`{"`+key+`":`, depth) + leaf + strings.Repeat("}", depth)
}

func callLine(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_%s","arguments":%s}}`, id, tool, args)
}

type bound struct {
	cpu     time.Duration // the bridge's user and system time
	rss     int           // MiB, peak
	latency time.Duration // from the first line sent to the last response read
}

func TestFaultTable(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault table starts a bridge per row; skipped with -short")
	}
	rows := []struct {
		class, input string
		setup        func(t *testing.T, dir string)
		args         []string
		lines        []string
		sigterm      bool // send SIGTERM once the lines are written
		want         []string
		bound        bound
	}{
		{class: "protocol envelope", input: "a 40 MiB line (over --max-message-size)",
			lines: []string{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 40<<20) + `"}}`},
			want:  []string{`"id":1,"error":{"code":-32600,"message":"message longer than`},
			bound: bound{cpu: 2 * time.Second, rss: 250, latency: 5 * time.Second}},
		{class: "protocol envelope", input: "JSON nested 100,000 deep",
			lines: []string{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}}`},
			want:  []string{`"error":{"code":-32700`},
			bound: bound{cpu: 2 * time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "argument shape", input: "an integer of 2,000,000 digits against minimum/maximum",
			lines: []string{callLine(1, "h_bounded", `{"n":`+strings.Repeat("9", 2_000_000)+`}`)},
			want:  []string{`"isError":true`, "--max-number-length"},
			bound: bound{cpu: 2 * time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "argument shape", input: "arguments nested 2,000 deep against a recursive schema",
			lines: []string{callLine(1, "h_tree", deepObject("c", 2000, "1"))},
			want:  []string{`"isError":true`, "--max-depth"},
			bound: bound{cpu: 2 * time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "schema shape", input: "a manifest whose schema is nested 400 deep",
			setup: func(t *testing.T, dir string) {
				deep := strings.Repeat("[", 400) + "1" + strings.Repeat("]", 400)
				write(t, filepath.Join(dir, "deep.json"), `{"id":"d","tools":[{"name":"d.deep","description":"Deep.","inputSchema":{"type":"object","properties":{"p":{"const":`+deep+`}}}}],"implementation":{"methods":{"d.deep":"d.deep"}}}`)
			},
			lines: []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			want:  []string{"tairseach_h_bounded"},
			bound: bound{cpu: 2 * time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "backend reply", input: "a result nested 2,000 deep against a recursive outputSchema",
			lines: []string{callLine(1, "h_tree", `{}`)},
			want:  []string{`"isError":true`, "--max-depth"},
			bound: bound{cpu: 2 * time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "backend reply", input: "a 5 MiB string that is not the email its outputSchema says (logged without its value)",
			lines: []string{callLine(1, "h_mail", `{}`)},
			want:  []string{`"isError":true`, "broke its contract"},
			bound: bound{cpu: 2 * time.Second, rss: 120, latency: 5 * time.Second}},
		{class: "backend reply", input: "a 30 MB result",
			lines: []string{callLine(1, "h_big", `{}`)},
			want:  []string{`"structuredContent":{"data":"bbbb`},
			bound: bound{cpu: 3 * time.Second, rss: 350, latency: 10 * time.Second}},
		{class: "backend reply", input: "no answer, with --call-timeout 1s",
			args:  []string{"--call-timeout", "1s"},
			lines: []string{callLine(1, "h_hang", `{}`)},
			want:  []string{`"isError":true`, "did not answer h.hang within 1s"},
			bound: bound{cpu: time.Second, rss: 80, latency: 4 * time.Second}},
		{class: "file system event", input: "a named pipe and a link loop among the manifests",
			setup: func(t *testing.T, dir string) {
				if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(".", filepath.Join(dir, "loop")); err != nil {
					t.Fatal(err)
				}
			},
			lines: []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			want:  []string{"tairseach_h_bounded"},
			bound: bound{cpu: time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "signal", input: "SIGTERM while a call waits on a backend that never answers",
			lines:   []string{callLine(1, "h_hang", `{}`)},
			sigterm: true,
			want:    []string{`"id":1,"result":`, `"isError":true`},
			bound:   bound{cpu: time.Second, rss: 80, latency: 8 * time.Second}},
	}
	scale := 1
	if raceEnabled {
		scale = 8 // the race detector's own CPU and memory
	}
	for _, row := range rows {
		t.Run(row.class+": "+row.input, func(t *testing.T) {
			be := hostileBackend(t)
			dir := manifestDir(t, map[string]string{"h.json": hostileManifest})
			if row.setup != nil {
				row.setup(t, dir)
			}
			cmd := bridgeCmd(dir, be.Path, append([]string{"--no-watch", "--log-level", "warn"}, row.args...)...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			go func() { // writes the lines; stdin is closed once they are answered
				for _, l := range row.lines {
					io.WriteString(stdin, l+"\n")
				}
			}()
			if row.sigterm {
				waitForMethod(t, be, "h.hang")
				cmd.Process.Signal(syscall.SIGTERM)
			}
			var out []string
			r := bufio.NewReaderSize(stdout, 1<<20)
			for len(out) < len(row.lines) {
				line, err := r.ReadString('\n')
				if err != nil {
					break
				}
				out = append(out, line)
			}
			latency := time.Since(start)
			rss := peakRSS(t, cmd.Process.Pid) // before it exits: after, /proc no longer has it
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("bridge: %v\n%s", err, stderr.String())
			}
			all := strings.Join(out, "")
			for _, w := range row.want {
				if !strings.Contains(all, w) {
					t.Errorf("responses lack %q: %.300s", w, all)
				}
			}
			if len(out) != len(row.lines) {
				t.Errorf("%d responses to %d requests", len(out), len(row.lines))
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			t.Logf("measured: cpu %v, peak RSS %d MiB, answered in %v (bound: %v, %d MiB, %v)",
				cpu.Round(time.Millisecond), rss, latency.Round(time.Millisecond), row.bound.cpu, row.bound.rss, row.bound.latency)
			if cpu > row.bound.cpu*time.Duration(scale) || rss > row.bound.rss*scale || latency > row.bound.latency*time.Duration(scale) {
				t.Errorf("past its bound: cpu %v, RSS %d MiB, latency %v", cpu, rss, latency)
			}
			for _, l := range strings.Split(stderr.String(), "\n") {
				if len(l) > 4<<10 {
					t.Errorf("a log line of %d bytes: %.200s", len(l), l)
				}
			}
			// Shutdown tells the truth: every call was answered and
			// stdout was never blocked, so the log must not say so.
			if strings.Contains(stderr.String(), "blocked") || strings.Contains(stderr.String(), "did not end") {
				t.Errorf("the log claims a stall that did not happen:\n%s", stderr.String())
			}
		})
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// peakRSS returns a running process's peak resident set in MiB (VmHWM;
// wait4's ru_maxrss would count the test process it was forked from), or
// 0 when the process is already exiting.
func peakRSS(t *testing.T, pid int) int {
	return procStatusKiB(t, pid, "VmHWM") / 1024
}
