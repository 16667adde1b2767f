package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"runtime"
	"syscall"
)

// serveRelay is the least a process between the client and the backend
// can do, for the floor row: it relays each tools/call's arguments to the
// backend's echo method on one connection and wraps the reply, finding
// the id, the arguments and the result by position instead of parsing,
// and answers initialize and tools/list with fixed lines. It runs as the
// bridge does (one processor, stdin read through the poller), so the
// difference between the two rows is the bridge's own work. It serves
// only what the sequential measurement sends.
func serveRelay(sock string) error {
	runtime.GOMAXPROCS(1)
	if err := syscall.SetNonblock(0, true); err != nil {
		return err
	}
	in := bufio.NewReaderSize(os.NewFile(0, "stdin"), 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	c, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	back := bufio.NewReaderSize(c, 1<<20)
	var req []byte
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			return nil // stdin ended
		}
		i := bytes.Index(line, []byte(`"id":`))
		if i < 0 {
			continue // a notification
		}
		id := line[i+5:]
		id = id[:bytes.IndexByte(id, ',')]
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(id)
		switch {
		case bytes.Contains(line, []byte(`"method":"initialize"`)):
			out.WriteString(`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"relay","version":"0"}}}` + "\n")
		case bytes.Contains(line, []byte(`"method":"tools/call"`)):
			// …,"arguments":ARGS}}\n
			args := line[bytes.Index(line, []byte(`"arguments":`))+len(`"arguments":`) : len(line)-3]
			req = append(append(req[:0], `{"jsonrpc":"2.0","id":1,"method":"echo","params":`...), args...)
			if _, err := c.Write(append(req, "}\n"...)); err != nil {
				return err
			}
			reply, err := back.ReadSlice('\n')
			if err != nil {
				return err
			}
			// {"jsonrpc":"2.0","id":1,"result":RESULT}\n
			result := reply[bytes.Index(reply, []byte(`"result":`))+len(`"result":`) : len(reply)-2]
			out.WriteString(`,"result":{"content":[{"type":"text","text":"relayed"}],"structuredContent":`)
			out.Write(result)
			out.WriteString("}}\n")
		default:
			out.WriteString(`,"result":{"tools":[]}}` + "\n")
		}
		if in.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return err
			}
		}
	}
}
