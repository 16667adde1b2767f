package socketclient

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

func benchParams(size int) json.RawMessage {
	return json.RawMessage(`{"data":"` + strings.Repeat("x", size-11) + `"}`)
}

func BenchmarkCall(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			s := sockettest.NewServer(b, sockettest.Echo)
			c := New(s.Path, nil)
			defer c.Close()
			p := benchParams(size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Call(context.Background(), "echo", p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDirect is the baseline: the same calls on a raw connection.
func BenchmarkDirect(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			s := sockettest.NewServer(b, sockettest.Echo)
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
				conn.Write(line)
				if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCallParallel(b *testing.B) {
	s := sockettest.NewServer(b, sockettest.Echo)
	c := New(s.Path, nil)
	defer c.Close()
	p := benchParams(100)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Call(context.Background(), "echo", p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkParseReply(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"id":"n1","title":"groceries","created_at":"2026-11-23T07:00:00Z"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseReply(line); err != nil {
			b.Fatal(err)
		}
	}
}
