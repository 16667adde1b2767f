//go:build unix

package main

// The fault table: one row per class of hostile input, each run against
// the built binary with the bound it must stay within (the bridge's CPU
// time, its peak RSS, and the time to answer everything) and the figure
// measured, logged with -v. docs/reliability.md keeps the table.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// hostileManifest has schemas that make the schema library's work grow
// fast with its input: bounds on numbers, recursion, alternatives that
// all descend into the same children, and formats.
var hostileManifest = `{"id":"h","tools":[
 {"name":"h.bounded","description":"A bounded number.","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":100}}}},
 {"name":"h.tree","description":"A recursive shape.",
  "inputSchema":{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"c":{"$ref":"#/$defs/node"}},"additionalProperties":false}}},
  "outputSchema":{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"c":{"$ref":"#/$defs/node"}},"additionalProperties":false}}}},
 {"name":"h.big","description":"A large reply.","inputSchema":{"type":"object"}},
 {"name":"h.mail","description":"An address.","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"c":{"type":"string","format":"email"}}}},
 {"name":"h.hang","description":"Never answered.","inputSchema":{"type":"object"}},
 {"name":"h.groups","description":"Groups and items.","inputSchema":` + groupsSchema + `,"outputSchema":` + groupsSchema + `},
 {"name":"h.twice","description":"One value, checked 2^30 times.","inputSchema":` + twiceSchema + `},
 {"name":"h.list","description":"A list of strings.","inputSchema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}},
 {"name":"h.format","description":"Formats.","inputSchema":{"type":"object","properties":{"pattern":{"type":"string","format":"regex"},"span":{"type":"string","format":"duration"}}}}
],"implementation":{"methods":{"h.bounded":"h.bounded","h.tree":"h.tree","h.big":"h.big","h.mail":"h.mail","h.hang":"h.hang","h.groups":"h.groups","h.twice":"h.twice","h.list":"h.list","h.format":"h.format"}}}`

// groupsSchema is a tree of groups and items that both have children:
// each alternative descends into the same children, so the schema
// library's work doubles with each level of the value.
const groupsSchema = `{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"oneOf":[
 {"type":"object","properties":{"kind":{"const":"group"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kind"]},
 {"type":"object","properties":{"kind":{"const":"item"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kind"]}]}}}`

// groupTree returns a value for groupsSchema, depth groups deep.
func groupTree(depth int) string {
	return strings.Repeat(`{"kind":"group","children":[`, depth) + `{"kind":"item"}` + strings.Repeat(`]}`, depth)
}

// twiceSchema applies to "s" thirty levels of alternatives, each made of
// the level below twice: 2^30 steps, however small the value.
var twiceSchema = func() string {
	defs := []string{`"d0":{"type":"string"}`}
	for i := 1; i <= 30; i++ {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"allOf":[{"$ref":"#/$defs/d%d"}]}],"not":{"const":"x"}}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{"s":{"$ref":"#/$defs/d30"}},"$defs":{%s}}`, strings.Join(defs, ","))
}()

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
		case "h.groups":
			return jsontext.Value(groupTree(24)), nil
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
	// after bounds the bridge's CPU time from the last response to its
	// exit, when set: nothing keeps working once everything is answered.
	after time.Duration
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
		then         []string // sent once lines are answered, keeping the bridge up while its CPU after the answers is measured
		sigterm      bool     // send SIGTERM once the lines are written
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
		{class: "argument shape", input: "a tree 17 levels deep against a schema whose alternatives all descend into it, with --call-timeout 2s",
			args:  []string{"--call-timeout", "2s"},
			lines: []string{callLine(1, "h_groups", groupTree(17))},
			want:  []string{`"isError":true`, "takes more steps to check than its size and the schema's justify"},
			bound: bound{cpu: time.Second, rss: 80, latency: 3 * time.Second, after: 200 * time.Millisecond}},
		{class: "argument shape", input: "the same, 24 levels deep",
			args:  []string{"--call-timeout", "2s"},
			lines: []string{callLine(1, "h_groups", groupTree(24))},
			want:  []string{`"isError":true`, "takes more steps to check than its size and the schema's justify"},
			bound: bound{cpu: time.Second, rss: 80, latency: 3 * time.Second, after: 200 * time.Millisecond}},
		{class: "argument shape", input: "one string checked 2^30 times over, the bound on steps raised by 30,000 more values, with --call-timeout 2s",
			args:  []string{"--call-timeout", "2s"},
			lines: []string{callLine(1, "h_twice", `{"s":"a","pad":[`+strings.Repeat("0,", 30_000)+`0]}`)},
			want:  []string{`"isError":true`, "took longer than 2s while its arguments were checked"},
			// One processor for the call's 2 s, and the collector's quarter
			// of the machine (of 2 processors here) for the garbage the
			// check makes: 3.1 s measured, against 4 s for both processors.
			bound: bound{cpu: 3500 * time.Millisecond, rss: 80, latency: 3 * time.Second, after: 200 * time.Millisecond}},
		{class: "argument shape", input: "an array of 4,000,000 numbers (8 MB), at the default limits",
			lines: []string{callLine(1, "h_list", `{"a":[`+strings.Repeat("0,", 3_999_999)+`0]}`)},
			want:  []string{`"isError":true`, "holds more than the 500000 values that are checked"},
			// 2 s of CPU, as the rows above: reading and parsing 8 MB took
			// 0.83–1.07 s on the development VM on 2026-11-28, loaded.
			bound: bound{cpu: 2 * time.Second, rss: 120, latency: 3 * time.Second, after: 200 * time.Millisecond}},
		{class: "argument shape", input: "an array of 2,000,000 numbers where strings are expected (4 MB), with --max-checked-values 4000000 --call-timeout 2s, then a call that waits 2 s",
			args:  []string{"--call-timeout", "2s", "--max-checked-values", "4000000"},
			lines: []string{callLine(1, "h_list", `{"a":[`+strings.Repeat("0,", 1_999_999)+`0]}`)},
			then:  []string{callLine(2, "h_hang", `{}`)},
			want:  []string{`"isError":true`, "took longer than 2s while its arguments were checked"},
			bound: bound{cpu: 4 * time.Second, rss: 400, latency: 5 * time.Second, after: 200 * time.Millisecond}},
		{class: "argument format", input: "a regex of 8,000,000 characters",
			lines: []string{callLine(1, "h_format", `{"pattern":"`+strings.Repeat("a", 8_000_000)+`"}`)},
			want:  []string{`"isError":true`, `longer than the 1000 bytes that are checked as \"regex\"`},
			bound: bound{cpu: time.Second, rss: 120, latency: 5 * time.Second, after: 200 * time.Millisecond}},
		{class: "argument format", input: "a duration of 8,000,000 characters",
			lines: []string{callLine(1, "h_format", `{"span":"P`+strings.Repeat("1Y", 4_000_000)+`"}`)},
			want:  []string{`"isError":true`, `longer than the 256 bytes that are checked as \"duration\"`},
			bound: bound{cpu: time.Second, rss: 120, latency: 5 * time.Second, after: 200 * time.Millisecond}},
		{class: "schema shape", input: "a manifest whose schema is nested 400 deep",
			setup: func(t *testing.T, dir string) {
				deep := strings.Repeat("[", 400) + "1" + strings.Repeat("]", 400)
				write(t, filepath.Join(dir, "deep.json"), `{"id":"d","tools":[{"name":"d.deep","description":"Deep.","inputSchema":{"type":"object","properties":{"p":{"const":`+deep+`}}}}],"implementation":{"methods":{"d.deep":"d.deep"}}}`)
			},
			lines: []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			want:  []string{"tairseach_h_bounded"},
			bound: bound{cpu: 2 * time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "schema shape", input: "a manifest whose schema has a pattern of 8,000,000 characters",
			setup: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "pattern.json"), `{"id":"p","tools":[{"name":"p.long","description":"Long.","inputSchema":{"type":"object","properties":{"p":{"type":"string","pattern":"`+strings.Repeat("a", 8_000_000)+`"}}}}],"implementation":{"methods":{"p.long":"p.long"}}}`)
			},
			lines: []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			want:  []string{"tairseach_h_bounded"},
			bound: bound{cpu: time.Second, rss: 120, latency: 5 * time.Second}},
		{class: "backend reply", input: "a result nested 2,000 deep against a recursive outputSchema",
			lines: []string{callLine(1, "h_tree", `{}`)},
			want:  []string{`"isError":true`, "--max-depth"},
			bound: bound{cpu: 2 * time.Second, rss: 80, latency: 5 * time.Second}},
		{class: "backend reply", input: "a result 24 levels deep against an outputSchema whose alternatives all descend into it, with --call-timeout 2s",
			args:  []string{"--call-timeout", "2s"},
			lines: []string{callLine(1, "h_groups", groupTree(1))},
			want:  []string{`"isError":true`, "cannot be checked against the tool's outputSchema"},
			bound: bound{cpu: time.Second, rss: 80, latency: 3 * time.Second, after: 200 * time.Millisecond}},
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
			// A bridge that would take far past its bound is stopped, so
			// that the row fails rather than the whole test timing out.
			watchdog := time.AfterFunc(3*row.bound.latency*time.Duration(scale), func() { cmd.Process.Kill() })
			defer watchdog.Stop()
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
			answeredCPU := procCPU(t, cmd.Process.Pid)
			for _, l := range row.then {
				io.WriteString(stdin, l+"\n")
				if _, err := r.ReadString('\n'); err != nil {
					t.Errorf("no response to %.100s: %v", l, err)
				}
			}
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
			after := max(cpu-answeredCPU, 0)
			t.Logf("measured: cpu %v, peak RSS %d MiB, answered in %v, cpu after the answers %v (bound: %v, %d MiB, %v, %v)",
				cpu.Round(time.Millisecond), rss, latency.Round(time.Millisecond), after.Round(time.Millisecond), row.bound.cpu, row.bound.rss, row.bound.latency, row.bound.after)
			if cpu > row.bound.cpu*time.Duration(scale) || rss > row.bound.rss*scale || latency > row.bound.latency*time.Duration(scale) ||
				(row.bound.after > 0 && after > row.bound.after*time.Duration(scale)) {
				t.Errorf("past its bound: cpu %v, RSS %d MiB, latency %v, cpu after the answers %v", cpu, rss, latency, after)
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

// procCPU returns a running process's user and system time so far, to
// the kernel's tick of 10 ms, or 0 when the process is already exiting.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc here to read the CPU time: %v", err)
	}
	// The command name, in parentheses, may hold spaces: count the
	// fields after it; utime and stime are the 14th and 15th of all.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ, 100 on Linux
}

// peakRSS returns a running process's peak resident set in MiB (VmHWM;
// wait4's ru_maxrss would count the test process it was forked from), or
// 0 when the process is already exiting.
func peakRSS(t *testing.T, pid int) int {
	return procStatusKiB(t, pid, "VmHWM") / 1024
}
