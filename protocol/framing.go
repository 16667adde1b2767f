package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads newline-delimited messages of at most max bytes.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	// tail is the last tailSize bytes of the last line that was too long:
	// clients that write the id last (the TypeScript SDK) show it there.
	tail []byte
}

const tailSize = 256

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending ("\n" or "\r\n",
// which the limit does not count). For a line longer than the limit it
// returns tooLong and the line's first bytes, at least as many as the
// read buffer holds, so the message's id may be found, and keeps its last
// bytes in tail; the rest of the line is read and dropped, never held.
// The line is valid until the next call. err is the error that ended the input, after the last line.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	if cap(lr.buf) > 1<<20 {
		lr.buf = nil // do not keep a huge buffer for the rest of the session
	}
	lr.buf, lr.tail = lr.buf[:0], lr.tail[:0]
	for {
		frag, err := lr.br.ReadSlice('\n')
		switch {
		case tooLong:
		case len(lr.buf)+len(frag) > lr.max+len("\r\n"):
			tooLong = true
			if len(lr.buf) == 0 {
				lr.buf = append(lr.buf, frag...)
			}
		default:
			lr.buf = appendDoubling(lr.buf, frag, lr.max+len("\r\n"))
		}
		if tooLong {
			lr.tail = append(lr.tail, frag...)
			if n := len(lr.tail); n > tailSize {
				lr.tail = lr.tail[:copy(lr.tail, lr.tail[n-tailSize:])]
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(lr.buf, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, tooLong || len(line) > lr.max, err
	}
}

// appendDoubling appends frag to buf, doubling its capacity when it must
// grow, up to limit: a line of many MiB then costs a few allocations and
// copies, where append's gentler growth of large slices would cost dozens
// (and the page faults of each).
func appendDoubling(buf, frag []byte, limit int) []byte {
	if need := len(buf) + len(frag); need > cap(buf) {
		grown := make([]byte, len(buf), max(min(2*cap(buf), limit), need))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, frag...)
}
