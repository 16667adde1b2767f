package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// The protocol versions of the HTTP rows: a legacy session's, and the
// modern era's, whose requests stand alone.
const (
	legacyVersion = "2025-11-25"
	modernVersion = "2026-07-28"
)

// mcpPath is where the servers measured serve MCP.
const mcpPath = "/mcp"

// postHeader is the header lines every MCP POST carries.
const postHeader = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"

// sessionHeader is the header lines of a request in the legacy session id.
func sessionHeader(id string) string {
	return "Mcp-Session-Id: " + id + "\r\nMCP-Protocol-Version: " + legacyVersion + "\r\n"
}

// openSession opens a legacy session on c, as a client does: initialize,
// then notifications/initialized. It returns the session's id.
func openSession(c *httpConn) (string, error) {
	resp, err := c.do(http.MethodPost, mcpPath, postHeader, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`), true)
	switch {
	case err != nil:
		return "", fmt.Errorf("initialize: %w", err)
	case resp.status != http.StatusOK || resp.sessionID == "" || !bytes.Contains(resp.message(), []byte(`"protocolVersion":"`+legacyVersion+`"`)):
		return "", fmt.Errorf("initialize: status %d, session %q, %.200s", resp.status, resp.sessionID, resp.body)
	}
	id := resp.sessionID
	resp, err = c.do(http.MethodPost, mcpPath, postHeader+sessionHeader(id), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), false)
	switch {
	case err != nil:
		return "", fmt.Errorf("notifications/initialized: %w", err)
	case resp.status != http.StatusAccepted:
		return "", fmt.Errorf("notifications/initialized: status %d, %.200s", resp.status, resp.body)
	}
	return id, nil
}

// endSession ends the legacy session id with DELETE, and reports whether
// the server ended it (204) rather than not knowing it.
func endSession(c *httpConn, id string) (bool, error) {
	resp, err := c.do(http.MethodDelete, mcpPath, sessionHeader(id), nil, false)
	return err == nil && resp.status == http.StatusNoContent, err
}

// listTools asks for the server's tools in the legacy session id, page by
// page, and returns how many there are.
func listTools(c *httpConn, id string) (int, error) {
	tools, cursor := 0, ""
	for {
		params := ""
		if cursor != "" {
			b, _ := json.Marshal(cursor)
			params = `,"params":{"cursor":` + string(b) + `}`
		}
		resp, err := c.do(http.MethodPost, mcpPath, postHeader+sessionHeader(id), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"`+params+`}`), false)
		if err != nil {
			return 0, fmt.Errorf("tools/list: %w", err)
		}
		var page struct {
			Result *struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(resp.message(), &page); err != nil || page.Result == nil {
			return 0, fmt.Errorf("tools/list: status %d, %.200s", resp.status, resp.body)
		}
		tools += len(page.Result.Tools)
		if cursor = page.Result.NextCursor; cursor == "" {
			return tools, nil
		}
	}
}

// httpClient is one client of an HTTP server: a connection of its own,
// and in the legacy era a session of its own. It calls the echo tool with
// the same arguments every time, one call at a time, each request
// prepared but for its id.
type httpClient struct {
	c       *httpConn
	session string // its legacy session's id; "" in the modern era
	header  string // its calls' header lines
	// A call's body is before, its id, after.
	before, after string
	args          string
	nextID        int
	body          []byte // reused
}

// newHTTPClient connects to addr, opens a session unless modern, and
// makes one call, which must pass its checks, so that the connection and
// the session are warm before they are measured.
func newHTTPClient(addr string, modern bool, args string) (*httpClient, error) {
	c, err := dialHTTP(addr)
	if err != nil {
		return nil, err
	}
	cl := &httpClient{c: c, args: args, before: `{"jsonrpc":"2.0","id":`}
	if modern {
		cl.header = postHeader + "MCP-Protocol-Version: " + modernVersion + "\r\nMcp-Method: tools/call\r\nMcp-Name: " + echoTool + "\r\n"
		cl.after = `,"method":"tools/call","params":{"name":"` + echoTool + `","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	} else {
		if cl.session, err = openSession(c); err != nil {
			c.close()
			return nil, err
		}
		cl.header = postHeader + sessionHeader(cl.session)
		cl.after = `,"method":"tools/call","params":{"name":"` + echoTool + `","arguments":` + args + `}}`
	}
	if ok, err := cl.call(); err != nil || !ok {
		cl.close()
		return nil, fmt.Errorf("the first call failed its checks: %v, %.300s", err, c.body)
	}
	return cl, nil
}

// call makes one call and reports whether its response passed the checks:
// status 200, its id, and what verifyCall checks.
func (cl *httpClient) call() (bool, error) {
	cl.nextID++
	cl.body = append(cl.body[:0], cl.before...)
	cl.body = strconv.AppendInt(cl.body, int64(cl.nextID), 10)
	cl.body = append(cl.body, cl.after...)
	resp, err := cl.c.do(http.MethodPost, mcpPath, cl.header, cl.body, false)
	if err != nil {
		return false, err
	}
	msg := resp.message()
	id, ok := responseID(msg)
	return resp.status == http.StatusOK && ok && id == cl.nextID && verifyCall(msg, cl.args), nil
}

// close ends the client's session, if it has one, and its connection.
func (cl *httpClient) close() {
	if cl.session != "" {
		endSession(cl.c, cl.session)
	}
	cl.c.close()
}
