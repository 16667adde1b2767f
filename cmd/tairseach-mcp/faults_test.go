package main

// Fault tests: the backend dies, hangs, lies; the client floods, stalls
// and sends garbage; manifests churn under load. Every request must get
// exactly one response and the bridge must stay up.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// echoManifest maps tairseach_echo to the backend's echo method.
const echoManifest = `{"id":"echo","tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}],"implementation":{"methods":{"echo":"echo"}}}`

// collector reads the bridge's stdout and indexes responses by id.
type collector struct {
	mu        sync.Mutex
	responses map[string][]string
	others    []string
	arrived   chan struct{} // closed and replaced when a message arrives
	done      chan struct{}
}

func collect(t *testing.T, r io.Reader) *collector {
	c := &collector{responses: map[string][]string{}, arrived: make(chan struct{}), done: make(chan struct{})}
	// Reads until the bridge closes stdout.
	go func() {
		defer close(c.done)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			var env struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(line), &env) != nil {
				t.Errorf("invalid JSON on stdout: %.200s", line)
				continue
			}
			c.mu.Lock()
			if len(env.ID) > 0 {
				c.responses[string(env.ID)] = append(c.responses[string(env.ID)], line)
			} else {
				c.others = append(c.others, line)
			}
			close(c.arrived)
			c.arrived = make(chan struct{})
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *collector) count() int {
	n, _ := c.countAndWake()
	return n
}

// countAndWake returns the number of ids answered and a channel closed
// when the next message arrives.
func (c *collector) countAndWake() (int, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.responses), c.arrived
}

// exactlyOnce checks that ids 1..n each got one response and returns how
// many of them were tool errors.
func (c *collector) exactlyOnce(t *testing.T, n int) (toolErrors int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 1; i <= n; i++ {
		rs := c.responses[strconv.Itoa(i)]
		if len(rs) != 1 {
			t.Errorf("request %d got %d responses", i, len(rs))
			continue
		}
		if strings.Contains(rs[0], `"isError":true`) {
			toolErrors++
		}
	}
	for id, rs := range c.responses {
		if len(rs) != 1 && id != "null" {
			t.Errorf("id %s got %d responses", id, len(rs))
		}
	}
	return toolErrors
}

func waitCount(t *testing.T, c *collector, n int, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		got, arrived := c.countAndWake()
		if got >= n {
			return
		}
		select {
		case <-arrived:
		case <-c.done:
			t.Fatalf("the bridge closed stdout after %d responses, want %d", got, n)
		case <-timeout:
			t.Fatalf("%d responses after %s, want %d", got, within, n)
		}
	}
}

func callN(id, n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_echo","arguments":{"n":%d}}}`, id, n)
}

type running struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *collector
}

func runBridge(t *testing.T, cmd *exec.Cmd) *running {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, stdin: stdin, out: collect(t, stdout)}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return r
}

// finish closes stdin and checks the bridge exits 0.
func (r *running) finish(t *testing.T) {
	t.Helper()
	r.stdin.Close()
	// Read everything before Wait, which closes the pipe once the process
	// has exited, dropping what is still buffered in it.
	<-r.out.done
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("bridge exit: %v", err)
	}
}

// Not parallel, as the tests below that are not: each holds the bridge
// to a time (calls back within a second of a restart, a call timeout of
// 300 ms for answers that come at once) or measures its memory.

func TestBackendKilledAndRestartedDuringPipelinedLoad(t *testing.T) {
	s := sockettest.NewUnstartedServer(t, sockettest.Echo)
	s.Concurrent = true
	s.Start()
	dir := manifestDir(t, map[string]string{"echo.json": echoManifest})
	r := runBridge(t, bridgeCmd(dir, s.Path))
	const n = 3000
	sent := make(chan struct{})
	// The writer sends every request, then signals.
	go func() {
		defer close(sent)
		w := bufio.NewWriter(r.stdin)
		for i := 1; i <= n; i++ {
			fmt.Fprintln(w, callN(i, i))
			if i%100 == 0 {
				w.Flush()
				time.Sleep(time.Millisecond) // spread the load over the restarts
			}
		}
		w.Flush()
	}()
	for range 5 {
		time.Sleep(20 * time.Millisecond)
		s.Stop()
		time.Sleep(10 * time.Millisecond)
		s.Start()
	}
	<-sent
	waitCount(t, r.out, n, 30*time.Second)
	// Back within a second: calls succeed again.
	deadline := time.Now().Add(time.Second)
	for id := n + 1; ; id++ {
		io.WriteString(r.stdin, callN(id, id)+"\n")
		waitCount(t, r.out, id, 5*time.Second)
		r.out.mu.Lock()
		ok := !strings.Contains(r.out.responses[strconv.Itoa(id)][0], "isError")
		r.out.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("calls still fail a second after the backend came back")
		}
	}
	if r.cmd.ProcessState != nil {
		t.Fatal("the bridge exited")
	}
	r.finish(t)
	errs := r.out.exactlyOnce(t, n)
	t.Logf("%d of %d calls failed while the backend restarted 5 times", errs, n)
}

func TestBackendMisbehaviourFailsOnlyThatCall(t *testing.T) {
	s := sockettest.NewUnstartedServer(t, sockettest.Echo)
	s.HugeSize = 4 << 20
	s.Start()
	faults := map[string]sockettest.Fault{
		`"n":1`: sockettest.FaultNeverReply, `"n":2`: sockettest.FaultGarbage, `"n":3`: sockettest.FaultWrongID,
		`"n":4`: sockettest.FaultCloseMidReply, `"n":5`: sockettest.FaultHugeReply, `"n":6`: sockettest.FaultCloseBeforeReply,
	}
	s.SetFault(func(req sockettest.Request) sockettest.Fault {
		for k, f := range faults {
			if strings.Contains(string(req.Params), k+"}") {
				return f
			}
		}
		return sockettest.FaultNone
	})
	dir := manifestDir(t, map[string]string{"echo.json": echoManifest})
	r := runBridge(t, bridgeCmd(dir, s.Path, "--call-timeout", "300ms", "--max-reply-size", "1048576"))
	for i := 1; i <= 12; i++ {
		io.WriteString(r.stdin, callN(i, i)+"\n") // 1..6 misbehave, 7..12 are fine
	}
	waitCount(t, r.out, 12, 20*time.Second)
	r.finish(t)
	if errs := r.out.exactlyOnce(t, 12); errs != 6 {
		t.Errorf("%d tool errors, want 6", errs)
	}
	for i, want := range map[int]string{1: "did not answer", 2: "invalid reply", 3: "invalid reply", 4: "invalid reply", 5: "invalid reply", 6: "invalid reply"} {
		if got := r.out.responses[strconv.Itoa(i)][0]; !strings.Contains(got, want) {
			t.Errorf("call %d: %s lacks %q", i, got, want)
		}
	}
}

// procStatusKiB returns a field of a running process's /proc status in
// KiB, such as VmRSS, or 0 when the process is already exiting (a zombie
// has no memory left to report).
func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here to read %s: %v", field, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

func TestAClientThatStopsReadingGetsBackpressureNotBloat(t *testing.T) {
	s := sockettest.NewServer(t, sockettest.Echo)
	big := strings.Repeat("x", 16<<10)
	dir := manifestDir(t, map[string]string{"echo.json": `{"id":"echo","tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}],"implementation":{"methods":{"echo":"echo"}}}`})
	cmd := bridgeCmd(dir, s.Path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	// Nobody reads stdout. Send until the bridge stops taking requests.
	var sent atomic.Int64
	var stop atomic.Bool
	stalled := make(chan struct{})
	go func() {
		defer close(stalled)
		for i := 1; i <= 100000 && !stop.Load(); i++ {
			sent.Store(int64(i))
			if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_echo","arguments":{"b":%q}}}`+"\n", i, big); err != nil {
				return
			}
		}
	}()
	// Stalled once a while passes without a request taken: how long is a
	// guess, but one too short only measures memory before the stall.
	for last := int64(-1); sent.Load() != last; {
		last = sent.Load()
		select {
		case <-stalled:
			t.Fatal("the bridge took 100k requests without anyone reading: no backpressure")
		case <-time.After(500 * time.Millisecond):
		}
	}
	stop.Store(true)
	rss := procStatusKiB(t, cmd.Process.Pid, "VmRSS")
	t.Logf("stalled after about %d requests of 16 KiB; RSS %d MiB", sent.Load(), rss/1024)
	// Bounded by the bytes held for the client: the responses not yet
	// written stop at protocol.DefaultMaxHeldBytes (and the collector
	// may hold as much again); unbounded, 100k requests would take
	// gigabytes. The race detector multiplies memory about sevenfold.
	limit := (2*protocol.DefaultMaxHeldBytes + 32<<20) >> 10
	if raceEnabled {
		limit = 400 << 10
	}
	if rss > limit {
		t.Errorf("RSS %d MiB while stalled: memory is not bounded", rss/1024)
	}
	// Resume reading: everything sent is answered, once.
	c := collect(t, stdout)
	<-stalled // the writer finishes once the bridge reads again
	stdin.Close()
	<-c.done // all of stdout before Wait closes the pipe
	if err := cmd.Wait(); err != nil {
		t.Errorf("bridge exit: %v", err)
	}
	if got := c.count(); got != int(sent.Load()) {
		t.Errorf("%d responses, want %d", got, sent.Load())
	}
}

func TestStdinFloodAndGarbage(t *testing.T) {
	t.Parallel()
	s := sockettest.NewUnstartedServer(t, sockettest.Echo)
	s.Concurrent = true
	s.Start()
	dir := manifestDir(t, map[string]string{"echo.json": echoManifest})
	r := runBridge(t, bridgeCmd(dir, s.Path, "--max-message-size", "65536"))
	bad := []string{
		`{"jsonrpc":"2.0","id":"bad-1","method":"tools/call","params":{"name":"tairseach_echo","arguments":{"n":"` + strings.Repeat("y", 70000) + `"}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"bad-2\",\"method\":\"ping\",\"params\":{\"s\":\"\xff\xfe\"}}",
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		`{"jsonrpc":"2.0","id":"bad-3","method":"tools/call","params":"x"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"bad-4"}`,
		`{"id":"bad-5","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"bad-6","method":"tools/call","params":{"name":"tairseach_echo","arguments":{"n":"not an integer"}}}`,
	}
	const n = 100000
	go func() {
		w := bufio.NewWriterSize(r.stdin, 1<<20)
		for _, b := range bad {
			fmt.Fprintln(w, b)
		}
		for i := 1; i <= n; i++ {
			if i%2 == 0 {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
			} else {
				fmt.Fprintln(w, callN(i, i))
			}
		}
		w.Flush()
		r.stdin.Close()
	}()
	<-r.out.done // all of stdout before Wait closes the pipe
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("bridge exit: %v", err)
	}
	if errs := r.out.exactlyOnce(t, n); errs != 0 {
		t.Errorf("%d tool errors", errs)
	}
	// The over-long line's id comes first, so its -32600 carries it.
	for id, want := range map[string]string{
		`"bad-1"`: `message longer than 65536 bytes; raise --max-message-size to accept it`, `"bad-2"`: `"result"`, `"bad-3"`: `-32600`, `"bad-4"`: `-32600`, `"bad-5"`: `-32600`, `"bad-6"`: `Invalid arguments`,
	} {
		rs := r.out.responses[id]
		if len(rs) == 0 || !strings.Contains(strings.Join(rs, ""), want) {
			t.Errorf("response to %s = %q, want %s", id, rs, want)
		}
	}
}

func TestManifestChurnUnderLoad(t *testing.T) {
	t.Parallel()
	s := sockettest.NewUnstartedServer(t, sockettest.Echo)
	s.Concurrent = true
	s.Start()
	dir := manifestDir(t, map[string]string{"echo.json": echoManifest})
	r := runBridge(t, bridgeCmd(dir, s.Path))
	// Initialized, so the bridge says when the list changes.
	io.WriteString(r.stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	ctx, cancel := context.WithCancel(t.Context())
	churned := make(chan struct{})
	// The churner rewrites, corrupts, renames and deletes another manifest until cancelled.
	go func() {
		defer close(churned)
		other := filepath.Join(dir, "other.json")
		for i := 0; ctx.Err() == nil; i++ {
			switch i % 4 {
			case 0:
				os.WriteFile(other, []byte(strings.Replace(echoManifest, `"echo"`, fmt.Sprintf(`"other%d"`, i), 1)), 0o644)
			case 1:
				os.WriteFile(other, []byte(`{"id":`), 0o644)
			case 2:
				os.Rename(other, filepath.Join(dir, "renamed.json"))
			case 3:
				os.Remove(filepath.Join(dir, "renamed.json"))
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	const n = 2000
	w := bufio.NewWriter(r.stdin)
	for i := 1; i <= n; i++ {
		fmt.Fprintln(w, callN(i, i))
		if i%50 == 0 {
			w.Flush()
			time.Sleep(time.Millisecond)
		}
	}
	w.Flush()
	waitCount(t, r.out, n, 30*time.Second)
	cancel()
	<-churned
	// Settle on a final state, then the list must match the files.
	os.Remove(filepath.Join(dir, "renamed.json"))
	os.WriteFile(filepath.Join(dir, "other.json"), []byte(manifestJSONFor("final.tool")), 0o644)
	// List again after each list_changed until the list shows the files.
	timeout := time.After(10 * time.Second)
	for id := n + 1; ; id++ {
		r.out.mu.Lock()
		notified := len(r.out.others)
		r.out.mu.Unlock()
		io.WriteString(r.stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", id))
		waitCount(t, r.out, id+1, 5*time.Second) // ids 0 … id
		r.out.mu.Lock()
		list := r.out.responses[strconv.Itoa(id)][0]
		r.out.mu.Unlock()
		if strings.Count(list, `"name":`) == 2 && strings.Contains(list, "tairseach_final_tool") && strings.Contains(list, "tairseach_echo") {
			break
		}
		for {
			got, arrived := r.out.countAndWake()
			r.out.mu.Lock()
			more := len(r.out.others) > notified
			r.out.mu.Unlock()
			if more {
				break
			}
			select {
			case <-arrived:
			case <-timeout:
				t.Fatalf("final tool list does not match the files after %d responses: %s", got, list)
			}
		}
	}
	r.finish(t)
	if errs := r.out.exactlyOnce(t, n); errs != 0 {
		t.Errorf("%d calls of a tool that stayed valid failed during the churn", errs)
	}
}

func manifestJSONFor(tool string) string {
	return fmt.Sprintf(`{"id":"x","tools":[{"name":%q,"description":"X.","inputSchema":{"type":"object"}}],"implementation":{"methods":{%q:"echo"}}}`, tool, tool)
}
