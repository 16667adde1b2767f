package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// callResponse is a bridge's response to a payload call with id and size,
// as tairseach-mcp writes it.
func callResponse(id, size int) string {
	result := string(payloadResult(size))
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{"content":[{"type":"text","text":` + strconv.Quote(result) + `}],"structuredContent":` + result + "}}\n"
}

func TestScanLineSeesEveryQuoteWhereverPiecesEnd(t *testing.T) {
	t.Parallel()
	line := callResponse(7, 3000)
	var want []string
	for i := range len(line) {
		if line[i] == '"' {
			want = append(want, line[i:min(len(line), i+lookahead)])
		}
	}
	// Buffers from the least scanLine allows up, so that pieces end at
	// every place, quotes and markers cut across included.
	for size := lookahead; size <= lookahead+200; size++ {
		r := bufio.NewReaderSize(strings.NewReader(line+"next\n"), size)
		var got []string
		length, head, err := scanLine(r, func(at []byte) { got = append(got, string(at)) })
		if err != nil {
			t.Fatalf("buffer %d: %v", size, err)
		}
		if length != len(line) || string(head) != line[:headLen] {
			t.Fatalf("buffer %d: length %d, head %q; want %d, %q", size, length, head, len(line), line[:headLen])
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("buffer %d: quotes seen\n%q\nwant\n%q", size, got, want)
		}
		if rest, _ := io.ReadAll(r); string(rest) != "next\n" {
			t.Fatalf("buffer %d: the next line reads %q", size, rest)
		}
	}
}

func TestScanLineAtTheEndOfInput(t *testing.T) {
	t.Parallel()
	r := bufio.NewReaderSize(strings.NewReader(`{"jsonrpc":"2.0","id":1,"res`), 64)
	if _, _, err := scanLine(r, nil); err != io.ErrUnexpectedEOF {
		t.Errorf("a cut line: %v, want %v", err, io.ErrUnexpectedEOF)
	}
	if _, _, err := scanLine(r, nil); err != io.EOF {
		t.Errorf("no more lines: %v, want %v", err, io.EOF)
	}
}

// TestResultChecks runs the clients' checks of payload results over
// canned output: each wrong response counts as one error, and a right one
// as none.
func TestResultChecks(t *testing.T) {
	t.Parallel()
	const size = 5000
	ok := callResponse(1, size)
	bridged := []struct {
		name, response string
		errs           int
	}{
		{"as tairseach-mcp writes it", ok, 0},
		{"with its members in another order", `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":` + string(payloadResult(size)) + `,"content":[{"type":"text","text":` + strconv.Quote(string(payloadResult(size))) + "}]}}\n", 0},
		{"with a small extra member", strings.Replace(ok, `"result":{`, `"result":{"_meta":{"a":1},`, 1), 0},
		{"answering another id", strings.Replace(ok, `"id":1,`, `"id":2,`, 1), 1},
		{"as an error result", strings.Replace(ok, `"result":{`, `"result":{"isError":true,`, 1), 1},
		{"without structured content", strings.Replace(ok, `"structuredContent":`, `"structured":`, 1), 1},
		{"with a structured content that is not the payload", strings.Replace(ok, `"structuredContent":{"data":"ABC`, `"structuredContent":{"data":"XBC`, 1), 1},
		{"with the text cut short", strings.Replace(ok, `XYZ`, ``, 1), 1},
		{"with the payload once more", strings.Replace(ok, `"result":{`, `"result":{"x":`+string(payloadResult(size))+`,`, 1), 1},
		{"as a JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}}` + "\n", 1},
	}
	for _, tt := range bridged {
		t.Run("through a bridge, "+tt.name, func(t *testing.T) {
			t.Parallel()
			c := &client{w: bufio.NewWriter(io.Discard), r: bufio.NewReaderSize(strings.NewReader(tt.response), 1024), nextID: 1}
			var lat []time.Duration
			errs, err := c.results(size, 1, &lat)
			if err != nil || errs != tt.errs {
				t.Errorf("errors %d, %v; want %d", errs, err, tt.errs)
			}
		})
	}
	reply := `{"jsonrpc":"2.0","id":1,"result":` + string(payloadResult(size)) + "}\n"
	directCases := []struct {
		name, reply string
		errs        int
	}{
		{"as the backend writes it", reply, 0},
		{"answering another id", strings.Replace(reply, `"id":1,`, `"id":2,`, 1), 1},
		{"cut short", strings.Replace(reply, `XYZ`, ``, 1), 1},
		{"with another payload", strings.Replace(reply, `{"data":"ABC`, `{"data":"XBC`, 1), 1},
		{"as a JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}}` + "\n", 1},
	}
	for _, tt := range directCases {
		t.Run("directly, "+tt.name, func(t *testing.T) {
			t.Parallel()
			d := &direct{conn: discardConn{}, r: bufio.NewReaderSize(strings.NewReader(tt.reply), 1024)}
			var lat []time.Duration
			errs, err := d.results(size, 1, &lat)
			if err != nil || errs != tt.errs {
				t.Errorf("errors %d, %v; want %d", errs, err, tt.errs)
			}
		})
	}
}

// discardConn is a connection whose writes go nowhere.
type discardConn struct{ net.Conn }

func (discardConn) Write(b []byte) (int, error) { return len(b), nil }

func TestPayloadResult(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1, 63, 64, 65, 1000} {
		b := payloadResult(size)
		want := `{"data":"` + strings.Repeat(payloadAlphabet, size/len(payloadAlphabet)+1)[:size] + `"}`
		if string(b) != want {
			t.Errorf("payloadResult(%d) = %q, want %q", size, b, want)
		}
		if start := payloadStart(size); !bytes.HasPrefix(b, start) {
			t.Errorf("payloadResult(%d) = %q does not start with %q", size, b, start)
		}
	}
}
