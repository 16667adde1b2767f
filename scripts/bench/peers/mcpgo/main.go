// Command mcpgo is a bridge like tairseach-mcp built on
// github.com/mark3labs/mcp-go, for scripts/bench to measure beside it. It
// serves the tools of a manifests folder over stdio, named as the bridge
// names them (<prefix>_<name>, every character outside [a-zA-Z0-9_-] as
// _) with their inputSchema as it is written, and forwards each call's
// arguments to the backend method the manifest names, over a pool of up
// to 16 connections to the backend's Unix socket, one request at a time
// on each. It answers the backend's result as one text block, and as
// structured content too when it is an object; a backend error, or a
// backend it cannot reach, is a result with isError set.
//
// It is written as a user of mcp-go would write it, with the library's
// defaults except for one stdio worker per backend connection (mcp-go's
// default is 5), so that it can keep as many calls in flight as its pool
// allows. Like the bridge, it reads the manifests once at start; unlike
// it, it neither watches them nor checks arguments against the schemas.
//
//	mcpgo -socket PATH -manifests DIR [-prefix tairseach]
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
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// poolSize is how many connections to the backend the bridge opens at
// most, as tairseach-mcp does by default.
const poolSize = 16

// callTimeout bounds one backend call, as tairseach-mcp's default does.
const callTimeout = 50 * time.Second

func main() {
	socket := flag.String("socket", "", "the backend's Unix socket")
	manifests := flag.String("manifests", "", "the manifests folder, read recursively")
	prefix := flag.String("prefix", "tairseach", "tools are named <prefix>_<name>")
	flag.Parse()
	if err := run(*socket, *manifests, *prefix); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo:", err)
		os.Exit(1)
	}
}

func run(socket, manifests, prefix string) error {
	if socket == "" || manifests == "" {
		return errors.New("-socket and -manifests are required")
	}
	backend := newPool(socket, poolSize)
	defer backend.close()
	tools, err := loadTools(manifests, prefix, backend)
	if err != nil {
		return err
	}
	s := server.NewMCPServer("mcpgo-bridge", "1.0.0", server.WithToolCapabilities(false), server.WithRecovery())
	s.AddTools(tools...)
	return server.ServeStdio(s, server.WithWorkerPoolSize(poolSize))
}

// manifest is what the bridge reads of a manifest file.
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

// loadTools reads every *.json file under dir and returns its tools that
// name a backend method, each calling it through backend.
func loadTools(dir, prefix string, backend *pool) ([]server.ServerTool, error) {
	var tools []server.ServerTool
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
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
			tool := mcp.NewToolWithRawSchema(toolName(prefix, t.Name), t.Description, t.InputSchema)
			tools = append(tools, server.ServerTool{Tool: tool, Handler: backend.handler(method)})
		}
		return nil
	})
	return tools, err
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

// handler returns the handler of a tool that calls method.
func (p *pool) handler(method string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		params, ok := req.GetRawArguments().(json.RawMessage)
		if !ok {
			var err error
			if params, err = json.Marshal(req.GetRawArguments()); err != nil {
				return mcp.NewToolResultErrorFromErr("bad arguments", err), nil
			}
		}
		result, err := p.call(ctx, method, params)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(result))}}
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
