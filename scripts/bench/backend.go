package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"strconv"
	"sync"
)

// backend is a fake Tairseach backend for the load driver. Its method
// echo answers {"echo": <params>}; its method payload answers
// {"data":"<size bytes>"} for params {"size": size}. In sequential mode
// it answers one request at a time per connection, like the real server;
// in concurrent mode it answers pipelined requests of one connection
// concurrently.
type backend struct {
	ln         net.Listener
	concurrent bool
	wg         sync.WaitGroup
	payloads   payloads
}

func startBackend(path string, concurrent bool) (*backend, error) {
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	os.Chmod(path, 0o600)
	b := &backend{ln: ln, concurrent: concurrent}
	b.wg.Add(1)
	// The accept loop runs until close closes the listener.
	go func() {
		defer b.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.wg.Add(1)
			go func() { defer b.wg.Done(); b.serve(c) }() // ends when the client closes
		}
	}()
	return b, nil
}

func (b *backend) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 256<<10)
	w := bufio.NewWriterSize(c, 256<<10)
	var mu sync.Mutex // guards w in concurrent mode
	var pending sync.WaitGroup
	defer pending.Wait()
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		if !b.concurrent {
			writeParts(w, b.answer(line))
			if r.Buffered() == 0 {
				w.Flush()
			}
			continue
		}
		pending.Add(1)
		// Each request runs on its own; the connection waits for all at close.
		go func() {
			defer pending.Done()
			resp := b.answer(line)
			mu.Lock()
			writeParts(w, resp)
			w.Flush()
			mu.Unlock()
		}()
	}
}

// answer returns the response to the request line, in parts that are
// written one after the other. A payload's part is the cached one, not a
// copy.
func (b *backend) answer(line []byte) [][]byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return [][]byte{[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n")}
	}
	var buf bytes.Buffer
	buf.Grow(len(line) + 64)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(req.ID)
	switch req.Method {
	case "payload":
		var p struct {
			Size int `json:"size"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Size < 0 || p.Size > maxPayload {
			buf.WriteString(`,"error":{"code":-32602,"message":"params: want {\"size\": 0 to ` + strconv.Itoa(maxPayload) + `}"}}` + "\n")
			return [][]byte{buf.Bytes()}
		}
		buf.WriteString(`,"result":`)
		return [][]byte{buf.Bytes(), b.payloads.get(p.Size), []byte("}\n")}
	default:
		buf.WriteString(`,"result":{"echo":`)
		if len(req.Params) == 0 {
			buf.WriteString("null")
		} else {
			buf.Write(req.Params)
		}
		buf.WriteString("}}\n")
		return [][]byte{buf.Bytes()}
	}
}

// writeParts writes parts to w; most of a part larger than w's buffer
// goes to the connection without a copy.
func writeParts(w *bufio.Writer, parts [][]byte) {
	for _, p := range parts {
		w.Write(p)
	}
}

// maxPayload bounds the payload method's size.
const maxPayload = 256 << 20

// payloadAlphabet is what payloads are made of, over and over: base64's
// letters, as a large binary result would carry them, which JSON strings
// hold without escapes.
const payloadAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// payloadResult returns the payload method's result for size:
// {"data":"<size bytes of payloadAlphabet>"}.
func payloadResult(size int) []byte {
	b := make([]byte, 0, size+len(`{"data":""}`))
	b = append(b, `{"data":"`...)
	for len(b) < cap(b)-len(`"}`) {
		b = append(b, payloadAlphabet[:min(len(payloadAlphabet), cap(b)-len(`"}`)-len(b))]...)
	}
	return append(b, `"}`...)
}

// payloads caches the payload method's results by size, so that the
// backend's own cost per call stays a copy to the socket. It is safe for
// concurrent use.
type payloads struct {
	mu     sync.Mutex
	bySize map[int][]byte
}

func (p *payloads) get(size int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.bySize[size]
	if !ok {
		if p.bySize == nil {
			p.bySize = make(map[int][]byte)
		}
		b = payloadResult(size)
		p.bySize[size] = b
	}
	return b
}
