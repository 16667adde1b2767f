// Command bench measures tairseach-mcp against calls made directly to the
// same backend socket, side by side in one run: sequential call latency
// (100-byte and 64 KiB payloads), results of 64 KiB, 1 MiB and 16 MiB,
// pipelined throughput with 64 requests in flight (against a backend
// that answers pipelined requests concurrently, and one that answers one
// request at a time per connection, like the real server), tools/list
// latency and startup time with 1,000 tools, the bridge's peak RSS and
// CPU time per call; with 20,000 manifest files, the time to the first
// tools/list and the time a new tool takes to be served while another
// file is rewritten every 50 ms. The result and pipelined rows also
// measure a peer bridge built on mcp-go (peers/mcpgo). Over Streamable
// HTTP, it measures 1, 8 and 64 concurrent clients, each with a session
// of its own, and 64 making stateless requests of protocol 2026-07-28,
// beside a server built on the Go MCP SDK (peers/gosdk), and the memory
// of 1,000 idle sessions.
// Every response is verified.
//
//	go run ./scripts/bench [-bridge PATH] [-rows REGEXP] [-peers=false] [-n 2000] [-manifests 20000] [-stdio pipes|sockets] [-http-calls 20000] [-json out.json]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	bridge := flag.String("bridge", "", "tairseach-mcp binary (default: build it)")
	n := flag.Int("n", 2000, "calls per sequential measurement")
	pipelined := flag.Int("pipelined", 20000, "calls per pipelined measurement")
	tools := flag.Int("tools", 1000, "filler tools in the manifests")
	many := flag.Int("manifests", 20000, "manifest files, of one tool each, in the rows of many manifests")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	rows := flag.String("rows", "", "run only the rows whose names match this regular expression (default all)")
	httpCalls := flag.Int("http-calls", 20000, "calls per side of each HTTP row")
	idle := flag.Int("idle-sessions", 1000, "sessions the idle sessions row opens")
	settle := flag.Duration("settle", 5*time.Second, "how long the idle sessions row leaves a server to itself before each look at its memory")
	peers := flag.Bool("peers", true, "also measure the peers: the bridge built on mcp-go in the result and pipelined rows (built from "+mcpgoPeer.dir+"), the server built on the Go MCP SDK in the HTTP rows (from "+gosdkPeer.dir+")")
	stdio := flag.String("stdio", "pipes", "what the bridge gets as stdin and stdout: pipes (as Go's os/exec and Python give) or sockets (as Node's child_process gives, so Claude Desktop and the Inspector)")
	serveBackend := flag.String("serve-backend", "", "internal: run only the fake backend on this socket")
	concurrent := flag.Bool("concurrent", false, "internal: with -serve-backend, answer pipelined requests concurrently")
	serveRelayOn := flag.String("serve-relay", "", "internal: run only the do-nothing relay to the backend on this socket")
	flag.Parse()
	switch *stdio {
	case "pipes":
	case "sockets":
		stdioSockets = true
	default:
		fmt.Fprintln(os.Stderr, "bench: -stdio is pipes or sockets")
		os.Exit(2)
	}
	if *serveRelayOn != "" {
		if err := serveRelay(*serveRelayOn); err != nil {
			fmt.Fprintln(os.Stderr, "bench relay:", err)
			os.Exit(1)
		}
		return
	}
	if *serveBackend != "" {
		// The backend runs in its own process, as a real one does, so
		// both the direct and the bridged calls cross processes.
		if _, err := startBackend(*serveBackend, *concurrent); err != nil {
			fmt.Fprintln(os.Stderr, "bench backend:", err)
			os.Exit(1)
		}
		select {}
	}
	b := &bench{bridge: *bridge, n: *n, pipelined: *pipelined, tools: *tools, many: *many, httpCalls: *httpCalls, idle: *idle, settle: *settle}
	if *rows != "" {
		re, err := regexp.Compile(*rows)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -rows:", err)
			os.Exit(2)
		}
		b.rows = re
		if !slices.ContainsFunc(b.rowNames(), b.want) {
			fmt.Fprintf(os.Stderr, "bench: -rows %q selects no row; the rows are:\n\t%s\n", *rows, strings.Join(b.rowNames(), "\n\t"))
			os.Exit(2)
		}
	}
	if err := run(b, *peers, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(b *bench, peers bool, jsonOut string) error {
	work, err := os.MkdirTemp("", "tsb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b.work = work
	if b.bridge == "" {
		b.bridge = filepath.Join(work, "tairseach-mcp")
		// Built as the README installs it: static, no C library.
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.bridge, "./cmd/tairseach-mcp")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build the bridge (run from the repository root): %w", err)
		}
	}
	if peers && b.wantsPeer() {
		path, version, err := mcpgoPeer.build(work)
		if err != nil {
			return err
		}
		b.peer, b.peerName = path, mcpgoPeer.name+" "+version
	}
	if peers && b.wantsHTTPPeer() {
		path, version, err := gosdkPeer.build(work)
		if err != nil {
			return err
		}
		b.httpPeer, b.httpPeerName = path, gosdkPeer.name+" "+version
		// The peer stands for the SDK the project itself tests with.
		if ours, err := requiredVersion("go.mod", gosdkPeer.module); err == nil && ours != version {
			fmt.Fprintf(os.Stderr, "bench: warning: the go-sdk peer is built on %s %s, the project requires %s; update %s/go.mod\n", gosdkPeer.module, version, ours, gosdkPeer.dir)
		}
	}
	b.manifests = filepath.Join(work, "manifests")
	if err := writeManifests(b.manifests, b.tools, 0); err != nil {
		return err
	}
	res, err := b.runAll()
	if err != nil {
		return err
	}
	printTable(os.Stdout, res)
	if jsonOut != "" {
		return writeJSON(jsonOut, res)
	}
	return nil
}
