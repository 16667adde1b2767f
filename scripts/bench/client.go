package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

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

// The requests that start a legacy session.
const (
	initializeRequest       = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	initializedNotification = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

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

// echoTool is the name clients see of the manifests' tool that calls the
// backend's echo method.
const echoTool = "tairseach_bench_echo"

func callLine(args string) func(int) string {
	return func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + echoTool + `","arguments":` + args + `}}`
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
