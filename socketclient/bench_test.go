package socketclient

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// benchParams returns params of exactly size bytes.
func benchParams(size int) jsontext.Value {
	return jsontext.Value(`{"data":"` + strings.Repeat("x", size-11) + `"}`)
}

func benchServer(b *testing.B) *sockettest.Server {
	s := sockettest.NewUnstartedServer(b, sockettest.Echo)
	s.NoRecord = true // the record would grow with b.N
	s.Start()
	return s
}

func benchCall(b *testing.B, size int) {
	s := benchServer(b)
	c := New(s.Path, nil)
	defer c.Close()
	p := benchParams(size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(context.Background(), "echo", p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCall is a sequential call with 100 bytes of params, echoed.
func BenchmarkCall(b *testing.B) { benchCall(b, 100) }

// BenchmarkCall64KiB is a sequential call with 64 KiB of params, echoed.
func BenchmarkCall64KiB(b *testing.B) { benchCall(b, 64<<10) }

// BenchmarkCallParallel is 100-byte calls from GOMAXPROCS goroutines on the
// default pool.
func BenchmarkCallParallel(b *testing.B) {
	s := benchServer(b)
	c := New(s.Path, nil)
	defer c.Close()
	p := benchParams(100)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Call(context.Background(), "echo", p, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCallQueued is 100-byte calls with a timeout, as the bridge
// makes them, from 32 goroutines per processor on the default pool of 16
// connections: most calls wait for a connection, as under pipelined load.
func BenchmarkCallQueued(b *testing.B) {
	s := benchServer(b)
	c := New(s.Path, nil)
	defer c.Close()
	p := benchParams(100)
	b.ReportAllocs()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := c.Call(ctx, "echo", p, nil)
			cancel()
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchDirect(b *testing.B, size int) {
	s := benchServer(b)
	conn, err := net.Dial("unix", s.Path)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 1<<20)
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + string(benchParams(size)) + "}\n")
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirect is the baseline for BenchmarkCall: the same exchange on
// a raw connection, with no pool, no ids and no parsing. The difference is
// the client's cost; the rest is the fake backend's and the kernel's.
func BenchmarkDirect(b *testing.B) { benchDirect(b, 100) }

// BenchmarkDirect64KiB is the baseline for BenchmarkCall64KiB.
func BenchmarkDirect64KiB(b *testing.B) { benchDirect(b, 64<<10) }

var (
	smallReply = []byte(`{"jsonrpc":"2.0","id":12345,"result":{"id":"n1","title":"groceries","created_at":"2026-11-23T07:00:00Z"}}`)
	bigReply   = []byte(`{"jsonrpc":"2.0","id":12345,"result":` + string(benchParams(64<<10)) + `}`)
)

func BenchmarkDecodeReply(b *testing.B) {
	for _, bc := range []struct {
		name string
		line []byte
	}{{"small", smallReply}, {"64KiB", bigReply}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeReply(bc.line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeReplyEncodingJSON is the baseline for BenchmarkDecodeReply:
// decoding the same lines with encoding/json, which checks less.
func BenchmarkDecodeReplyEncodingJSON(b *testing.B) {
	for _, bc := range []struct {
		name string
		line []byte
	}{{"small", smallReply}, {"64KiB", bigReply}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.line)))
			b.ReportAllocs()
			for b.Loop() {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal(bc.line, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
