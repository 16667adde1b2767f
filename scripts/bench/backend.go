package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"sync"
)

// backend is a fake Tairseach backend for the load driver. Its one method,
// echo, answers {"echo": <params>}. In sequential mode it answers one
// request at a time per connection, like the real server; in concurrent
// mode it answers pipelined requests of one connection concurrently.
type backend struct {
	ln         net.Listener
	concurrent bool
	wg         sync.WaitGroup
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
			w.Write(answer(line))
			if r.Buffered() == 0 {
				w.Flush()
			}
			continue
		}
		pending.Add(1)
		// Each request runs on its own; the connection waits for all at close.
		go func() {
			defer pending.Done()
			resp := answer(line)
			mu.Lock()
			w.Write(resp)
			w.Flush()
			mu.Unlock()
		}()
	}
}

func answer(line []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n")
	}
	var buf bytes.Buffer
	buf.Grow(len(line) + 64)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(req.ID)
	buf.WriteString(`,"result":{"echo":`)
	if len(req.Params) == 0 {
		buf.WriteString("null")
	} else {
		buf.Write(req.Params)
	}
	buf.WriteString("}}\n")
	return buf.Bytes()
}
