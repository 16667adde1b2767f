// Command gosdk is a Streamable HTTP server like tairseach-mcp's HTTP
// transport built on the official Go MCP SDK
// (github.com/modelcontextprotocol/go-sdk), for scripts/bench to measure
// beside it. It serves the tools of a manifests folder, named as the
// bridge names them (<prefix>_<name>, every character outside
// [a-zA-Z0-9_-] as _) with their inputSchema as it is written, and
// forwards each call's arguments to the backend method the manifest
// names, over a pool of up to 16 connections to the backend's Unix
// socket, one request at a time on each. It answers the backend's result
// as one text block, and as structured content too when it is an
// object; a backend error, or a backend it cannot reach, is a result with
// isError set.
//
// It is written as a user of the SDK would write it: one mcp.Server, a
// stateful StreamableHTTPHandler for the legacy era's sessions and, as
// the SDK serves protocol 2026-07-28 only without sessions, a stateless
// one for the requests that name that version in MCP-Protocol-Version;
// the SDK's defaults otherwise. Like the bridge, it reads the manifests
// once at start; unlike it, it neither watches them nor checks arguments
// against the schemas. It prints the line the bridge prints once it
// listens, and shuts down on SIGTERM or SIGINT.
//
//	gosdk -socket PATH -manifests DIR [-listen 127.0.0.1:0] [-prefix tairseach]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// poolSize is how many connections to the backend the server opens at
// most, as tairseach-mcp does by default.
const poolSize = 16

// callTimeout bounds one backend call, as tairseach-mcp's default does.
const callTimeout = 50 * time.Second

// modernVersion is the first protocol version the SDK serves statelessly.
const modernVersion = "2026-07-28"

func main() {
	socket := flag.String("socket", "", "the backend's Unix socket")
	manifests := flag.String("manifests", "", "the manifests folder, read recursively")
	listen := flag.String("listen", "127.0.0.1:0", "the TCP address to serve HTTP on")
	prefix := flag.String("prefix", "tairseach", "tools are named <prefix>_<name>")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, *socket, *manifests, *listen, *prefix); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, socket, manifests, listen, prefix string) error {
	if socket == "" || manifests == "" {
		return errors.New("-socket and -manifests are required")
	}
	backend := newPool(socket, poolSize)
	defer backend.close()
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bridge", Version: "1.0.0"}, nil)
	if err := addTools(s, manifests, prefix, backend); err != nil {
		return err
	}
	server := func(*http.Request) *mcp.Server { return s }
	sessions := mcp.NewStreamableHTTPHandler(server, nil)
	stateless := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		// Versions are dates, so they compare as strings.
		if r.Header.Get("MCP-Protocol-Version") >= modernVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	fmt.Fprintf(os.Stderr, "serving MCP on http://%s/mcp\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }() // ends when hs is shut down
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}

// manifest is what the server reads of a manifest file.
type manifest struct {
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	Implementation struct {
		Methods map[string]string `json:"methods"`
	} `json:"implementation"`
}

// addTools reads every *.json file under dir and adds to s its tools that
// name a backend method, each calling it through backend.
func addTools(s *mcp.Server, dir, prefix string, backend *pool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var m manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, t := range m.Tools {
			method, ok := m.Implementation.Methods[t.Name]
			if !ok {
				continue
			}
			tool := &mcp.Tool{Name: toolName(prefix, t.Name), Description: t.Description, InputSchema: t.InputSchema}
			s.AddTool(tool, backend.handler(method))
		}
		return nil
	})
}

// toolName is the name a client sees for the manifest's tool name.
func toolName(prefix, name string) string {
	if prefix != "" {
		name = prefix + "_" + name
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}

// handler returns the handler of a tool that calls method with the
// call's arguments as received.
func (p *pool) handler(method string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		result, err := p.call(ctx, method, req.Params.Arguments)
		if err != nil {
			res := &mcp.CallToolResult{IsError: true}
			res.Content = []mcp.Content{&mcp.TextContent{Text: err.Error()}}
			return res, nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(result)}}}
		if len(result) > 0 && result[0] == '{' {
			res.StructuredContent = result
		}
		return res, nil
	}
}

// pool holds up to size connections to the backend, each carrying one
// request at a time, as the backend answers a connection's requests in
// order. It is safe for concurrent use.
type pool struct {
	path  string
	idle  chan *conn    // connections free for a call
	slots chan struct{} // one per connection open or being dialled
}

func newPool(path string, size int) *pool {
	return &pool{path: path, idle: make(chan *conn, size), slots: make(chan struct{}, size)}
}

// call sends one request to the backend and returns its result.
func (p *pool) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	result, err := c.call(ctx, method, params)
	var rpcErr *rpcError
	if err != nil && !errors.As(err, &rpcErr) {
		// The connection is in an unknown state: drop it.
		c.Close()
		<-p.slots
		return nil, err
	}
	p.idle <- c
	return result, err
}

// get returns an idle connection, or a new one while the pool has room,
// or waits for one to be free.
func (p *pool) get(ctx context.Context) (*conn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	select {
	case c := <-p.idle:
		return c, nil
	case p.slots <- struct{}{}:
		nc, err := net.Dial("unix", p.path)
		if err != nil {
			<-p.slots
			return nil, fmt.Errorf("the backend is not reachable: %w", err)
		}
		return &conn{Conn: nc, r: bufio.NewReaderSize(nc, 64<<10)}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close closes the idle connections.
func (p *pool) close() {
	for {
		select {
		case c := <-p.idle:
			c.Close()
		default:
			return
		}
	}
}

// conn is one connection to the backend, used by one call at a time.
type conn struct {
	net.Conn
	r      *bufio.Reader
	nextID int64
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      int64           `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpcError is an error the backend answered.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("the backend answered error %d: %s", e.Code, e.Message)
}

// call sends one request on c and reads its response.
func (c *conn) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	deadline := time.Now().Add(callTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.SetDeadline(deadline); err != nil {
		return nil, err
	}
	c.nextID++
	req := request{JSONRPC: "2.0", ID: c.nextID, Method: method, Params: params}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("write to the backend: %w", err)
	}
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("read from the backend: %w", err)
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("the backend's reply: %w", err)
	}
	switch {
	case resp.ID != req.ID:
		return nil, fmt.Errorf("the backend answered id %d to id %d", resp.ID, req.ID)
	case resp.Error != nil:
		return nil, resp.Error
	}
	return resp.Result, nil
}
