package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// resultSizes are the sizes of the results in the result rows.
var resultSizes = []int{64 << 10, 1 << 20, 16 << 20}

func resultRowName(size int) string { return "result of " + sizeName(size) }

func sizeName(size int) string {
	switch {
	case size >= 1<<20 && size%(1<<20) == 0:
		return strconv.Itoa(size>>20) + " MiB"
	case size >= 1<<10 && size%(1<<10) == 0:
		return strconv.Itoa(size>>10) + " KiB"
	}
	return strconv.Itoa(size) + " B"
}

// resultCalls is how many calls a result row makes on each side: as many
// as a 128 KiB row of n would carry, from at least 3 per round, so that
// the large rows stay short.
func resultCalls(n, size int) int {
	return max(3*rounds, min(n, int(int64(n)*(128<<10)/int64(size))))
}

// A load is what a sequential row sends, the same way directly and
// through a bridge: each function makes n calls one at a time, adds
// their latencies to lat and returns how many failed verification.
type load struct {
	direct  func(d *direct, n int, lat *[]time.Duration) (int, error)
	bridged func(c *client, n int, lat *[]time.Duration) (int, error)
}

// echoLoad calls the echo method with args.
func echoLoad(args string) load {
	return load{
		direct:  func(d *direct, n int, lat *[]time.Duration) (int, error) { return d.sequential(args, n, lat) },
		bridged: func(c *client, n int, lat *[]time.Duration) (int, error) { return c.sequential(args, n, lat) },
	}
}

// resultLoad asks the payload method for results of size bytes.
func resultLoad(size int) load {
	return load{
		direct:  func(d *direct, n int, lat *[]time.Duration) (int, error) { return d.results(size, n, lat) },
		bridged: func(c *client, n int, lat *[]time.Duration) (int, error) { return c.results(size, n, lat) },
	}
}

// payloadStart is how a payload result of size bytes starts, as far as
// the checks look at it.
func payloadStart(size int) []byte {
	const shown = 24
	b := payloadResult(min(size, shown))
	if size > shown {
		b = b[:len(b)-len(`"}`)]
	}
	return b
}

// results makes n tools/call requests for a result of size bytes, one at
// a time, adding their latencies to lat, and returns how many responses
// failed the check: the id, a result without isError, whose
// structuredContent starts as the payload does, and a length that holds
// the payload twice (as text and as structured content) in an envelope
// of at most envelopeSlack bytes more than the members MCP requires.
// The responses pass by without being kept or decoded (see scanLine).
func (c *client) results(size, n int, lat *[]time.Duration) (int, error) {
	c.stdout.SetReadDeadline(time.Now().Add(replyWithin))
	request := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"tairseach_bench_payload","arguments":{"size":` + strconv.Itoa(size) + `}}}`
	}
	start := payloadStart(size)
	errs := 0
	for range n {
		t0 := time.Now()
		id, err := c.send(request, true)
		if err != nil {
			return 0, err
		}
		var check callCheck
		check.start = start
		length, head, err := c.nextScanned(check.quote)
		if err != nil {
			return 0, err
		}
		*lat = append(*lat, time.Since(t0))
		prefix := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{`
		least := len(prefix) + len(`"content":[{"type":"text","text":"`) + quotedLen(size) + len(`"}],"structuredContent":`) + size + len(`{"data":""}`) + len("}}\n")
		if !bytes.HasPrefix(head, []byte(prefix)) || check.isError || !check.structured || length < least || length > least+envelopeSlack {
			errs++
		}
	}
	return errs, nil
}

// envelopeSlack is how many bytes a bridge's response to a payload call
// may hold beyond the members MCP requires (say a _meta or an explicit
// "isError":false).
const envelopeSlack = 256

// quotedLen is the length of the payload result of size bytes as a JSON
// string's contents: its four quotes are escaped.
func quotedLen(size int) int { return size + len(`{\"data\":\"\"}`) }

// callCheck gathers what the check of a tools/call response needs from
// the quotes scanLine passes it.
type callCheck struct {
	start               []byte // how the payload starts
	isError, structured bool
}

func (cc *callCheck) quote(at []byte) {
	const sc = `"structuredContent":`
	switch {
	case bytes.HasPrefix(at, []byte(`"isError":true`)):
		cc.isError = true
	case bytes.HasPrefix(at, []byte(sc)):
		cc.structured = bytes.HasPrefix(at[len(sc):], cc.start)
	}
}

// nextScanned reads the next response as scanLine does, skipping
// notifications.
func (c *client) nextScanned(quote func([]byte)) (length int, head []byte, err error) {
	for {
		length, head, err = scanLine(c.r, quote)
		if errors.Is(err, io.EOF) {
			err = errors.New("the bridge closed its output")
		}
		if _, ok := responseID(head); ok || err != nil {
			return length, head, err
		}
	}
}

// results makes n calls of the payload method for a result of size bytes,
// one at a time, adding their latencies to lat, and returns how many
// responses failed the check: the id, and the payload's start and length.
func (d *direct) results(size, n int, lat *[]time.Duration) (int, error) {
	start := payloadStart(size)
	errs := 0
	for range n {
		d.id++
		t0 := time.Now()
		if _, err := io.WriteString(d.conn, `{"jsonrpc":"2.0","id":`+strconv.Itoa(d.id)+`,"method":"payload","params":{"size":`+strconv.Itoa(size)+"}}\n"); err != nil {
			return 0, err
		}
		length, head, err := scanLine(d.r, nil)
		if err != nil {
			return 0, err
		}
		*lat = append(*lat, time.Since(t0))
		prefix := `{"jsonrpc":"2.0","id":` + strconv.Itoa(d.id) + `,"result":`
		if !bytes.HasPrefix(head, append([]byte(prefix), start...)) || length != len(prefix)+size+len(`{"data":""}`)+len("}\n") {
			errs++
		}
	}
	return errs, nil
}

// headLen is how many of a line's first bytes scanLine returns.
const headLen = 128

// lookahead is how many bytes from each quote scanLine shows.
const lookahead = 64

// scanLine reads one line from r without keeping it, for responses too
// large to copy or decode in the client without the client's cost
// showing in the bridge's figures: it returns the line's length and its
// first headLen bytes, and calls quote, when it is not nil, with the
// bytes from each '"' in the line, lookahead of them or up to the line's
// end. It costs a search for '"' in each buffer that r fills: the
// payloads hold none, so quote sees only the envelope. r's buffer must
// hold at least lookahead bytes.
func scanLine(r *bufio.Reader, quote func(at []byte)) (length int, head []byte, err error) {
	// joint holds the end of one piece, whose quotes had too few bytes
	// after them to show, followed by the next piece's start.
	var joint [2 * lookahead]byte
	carried := 0
	for {
		piece, err := r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) && length+len(piece) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, err
		}
		last := err == nil
		if length < headLen {
			head = append(head, piece[:min(len(piece), headLen-length)]...)
		}
		length += len(piece)
		if quote == nil {
			if last {
				return length, head, nil
			}
			continue
		}
		if carried > 0 {
			n := copy(joint[carried:], piece)
			quotes(joint[:carried+n], carried, quote)
		}
		end := len(piece)
		if !last {
			end = max(0, len(piece)-lookahead)
		}
		quotes(piece, end, quote)
		if last {
			return length, head, nil
		}
		carried = copy(joint[:], piece[end:])
	}
}

// quotes calls quote with the bytes from each '"' in b[:end], up to
// lookahead of them.
func quotes(b []byte, end int, quote func([]byte)) {
	for i := 0; i < end; i++ {
		j := bytes.IndexByte(b[i:end], '"')
		if j < 0 {
			return
		}
		i += j
		quote(b[i:min(len(b), i+lookahead)])
	}
}
