package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"
)

// httpConn is one kept-alive HTTP/1.1 connection of the load generator.
// It writes each request in one write, its header lines prepared ahead,
// and reads the response on the caller's goroutine with no more parsing
// than the checks need, so that its cost per call stays small beside the
// servers' (net/http's client hands every response from a goroutine of
// the connection's to the caller's). It reads what the servers measured
// here send: bodies of a Content-Length, or chunked, on a connection that
// stays open. It is not safe for concurrent use.
type httpConn struct {
	conn   net.Conn
	r      *bufio.Reader
	host   string // the Host header's value
	closed bool   // the server said Connection: close
	req    []byte // the request being written, reused
	body   []byte // the last response's body, reused
}

// httpResponse is what the load generator reads of a response.
type httpResponse struct {
	status      int
	eventStream bool   // Content-Type: text/event-stream
	sessionID   string // Mcp-Session-Id, when asked for
	body        []byte // valid until the connection's next request
}

func dialHTTP(addr string) (*httpConn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return newHTTPConn(conn, addr), nil
}

func newHTTPConn(conn net.Conn, host string) *httpConn {
	return &httpConn{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), host: host}
}

func (c *httpConn) close() error { return c.conn.Close() }

// do sends a request to path with the header lines header (each ending
// in "\r\n") and body, and reads its response; with wantSession, it keeps
// the response's Mcp-Session-Id. A body is sent with POST; nil sends none.
func (c *httpConn) do(method, path, header string, body []byte, wantSession bool) (httpResponse, error) {
	if c.closed {
		return httpResponse{}, errors.New("the server closed the connection")
	}
	c.req = append(c.req[:0], method...)
	c.req = append(c.req, ' ')
	c.req = append(c.req, path...)
	c.req = append(c.req, " HTTP/1.1\r\nHost: "...)
	c.req = append(c.req, c.host...)
	c.req = append(c.req, "\r\n"...)
	c.req = append(c.req, header...)
	if body != nil {
		c.req = append(c.req, "Content-Length: "...)
		c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
		c.req = append(c.req, "\r\n"...)
	}
	c.req = append(c.req, "\r\n"...)
	c.req = append(c.req, body...)
	c.conn.SetDeadline(time.Now().Add(replyWithin))
	if _, err := c.conn.Write(c.req); err != nil {
		return httpResponse{}, err
	}
	return c.read(method, wantSession)
}

// read reads one response to a request made with method.
func (c *httpConn) read(method string, wantSession bool) (httpResponse, error) {
	line, err := c.line()
	if err != nil {
		return httpResponse{}, err
	}
	// HTTP/1.1 200 OK
	var resp httpResponse
	if len(line) < len("HTTP/1.1 200") || !bytes.HasPrefix(line, []byte("HTTP/1.")) || !isStatus(line[9:12]) {
		return httpResponse{}, fmt.Errorf("not an HTTP/1.1 status line: %q", line)
	}
	resp.status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	length, chunked := -1, false
	for {
		line, err := c.line()
		if err != nil {
			return httpResponse{}, err
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return httpResponse{}, fmt.Errorf("not a header line: %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return httpResponse{}, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Content-Type")):
			resp.eventStream = bytes.HasPrefix(value, []byte("text/event-stream"))
		case bytes.EqualFold(name, []byte("Mcp-Session-Id")):
			if wantSession {
				resp.sessionID = string(value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			c.closed = c.closed || bytes.EqualFold(value, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case method == "HEAD" || resp.status == 204 || resp.status == 304 || resp.status < 200:
	case chunked:
		err = c.readChunked()
	case length >= 0:
		c.body = slices.Grow(c.body, length)[:length]
		_, err = io.ReadFull(c.r, c.body)
	default:
		err = errors.New("a response without Content-Length or chunks: the connection cannot be kept")
	}
	resp.body = c.body
	return resp, err
}

// readChunked reads a chunked body into c.body.
func (c *httpConn) readChunked() error {
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // a chunk extension
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 32)
		if err != nil || size < 0 {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, up to the empty line
				if line, err = c.line(); err != nil || len(line) == 0 {
					return err
				}
			}
		}
		n := len(c.body)
		c.body = slices.Grow(c.body, int(size))[:n+int(size)]
		if _, err := io.ReadFull(c.r, c.body[n:]); err != nil {
			return err
		}
		if line, err = c.line(); err != nil {
			return err
		}
		if len(line) != 0 {
			return fmt.Errorf("a chunk longer than its size: %q", line)
		}
	}
}

// line reads one line of the head or of a chunked body, without its
// CRLF. It is valid until the next read.
func (c *httpConn) line() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("the server closed the connection")
		}
		return nil, err
	}
	line = line[:len(line)-1]
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

func isStatus(b []byte) bool {
	return len(b) == 3 && b[0] >= '1' && b[0] <= '5' && b[1] >= '0' && b[1] <= '9' && b[2] >= '0' && b[2] <= '9'
}

// message returns the JSON-RPC message a response to a request carries:
// its body when it is JSON, and when it is an event stream the data of
// its last event, as the response to the request ends the stream. A
// JSON message fits on one data line: JSON text holds no raw newline.
func (r *httpResponse) message() []byte {
	if !r.eventStream {
		return bytes.TrimSpace(r.body)
	}
	var last []byte
	for rest := r.body; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if data, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\r")), []byte("data:")); ok {
			last = bytes.TrimPrefix(data, []byte(" "))
		}
	}
	return last
}
