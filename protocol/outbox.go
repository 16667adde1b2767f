package protocol

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Message is one message for the client, without a line ending, as a
// Sink is given it. Most are one part; a tool result is written in parts
// from the backend's bytes where they lie, so that a large result is
// never copied (see encodeCallResult). The bytes it holds are counted
// against its session's budget until Release.
type Message struct {
	parts []part
	// hold is the bytes of the request it answers, counted until it is
	// written or dropped; done releases anything else it holds. Either
	// is nil when there is nothing to release.
	hold *hold
	done func()
	// final marks the response to a request: the last message about it.
	final bool
	// request marks a request of the server's, which waits for the
	// client's answer.
	request bool
}

// part is bytes of a message, written as they are or, when quoted, as
// the contents of a JSON string. counted bytes are a request's, counted
// against the budget as they were read (a tool's result).
type part struct {
	b       []byte
	quoted  bool
	counted bool
}

func msgOf(b []byte, done func()) Message { return Message{parts: []part{{b: b}}, done: done} }

// Final reports whether m is the response to a request, after which no
// other message about that request comes. A final message of no bytes
// (Size 0) ends a request that gets no response, one the client
// cancelled: a Sink writes nothing for it, but may end what it keeps
// open for the request, such as an HTTP response.
func (m *Message) Final() bool { return m.final }

// Request reports whether m is a request of the server's to the client,
// which waits for its answer (a notification can be dropped; a request
// dropped would wait for nothing).
func (m *Message) Request() bool { return m.request }

// uncounted returns the bytes of m that are not counted yet, as held,
// not as written: a quoted part grows by its escapes only on its way out.
func (m *Message) uncounted() int {
	n := 0
	for _, p := range m.parts {
		if !p.counted {
			n += len(p.b)
		}
	}
	return n
}

// Bytes returns m as one slice, for the few places that need it whole.
func (m *Message) Bytes() []byte {
	if len(m.parts) == 1 && !m.parts[0].quoted {
		return m.parts[0].b
	}
	var buf bytes.Buffer
	m.WriteTo(&buf) // a bytes.Buffer does not fail
	return buf.Bytes()
}

// Size returns the bytes m holds: its length as written, but for the
// escapes a quoted part gains on its way out.
func (m *Message) Size() int {
	n := 0
	for _, p := range m.parts {
		n += len(p.b)
	}
	return n
}

// WriteTo writes m, without a line ending, to w.
func (m *Message) WriteTo(w io.Writer) (int64, error) {
	if len(m.parts) == 1 && !m.parts[0].quoted {
		n, err := w.Write(m.parts[0].b)
		return int64(n), err
	}
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, min(m.Size()+64, 32<<10))
	}
	var scratch []byte
	n, err := m.writeTo(bw, &scratch)
	if !ok && err == nil {
		err = bw.Flush()
	}
	return n, err
}

// Release releases what m holds: it is written, or will never be. A
// transport calls it exactly once for every message it was given; it
// must not use m afterwards.
func (m *Message) Release() {
	m.parts = nil
	if m.hold != nil {
		m.hold.finish()
		m.hold = nil
	}
	if m.done != nil {
		m.done()
		m.done = nil
	}
}

// quoteChunk is how much of a quoted part is escaped at a time.
const quoteChunk = 32 << 10

// writeTo writes m to w and returns the bytes written. scratch is the
// caller's buffer for escaping.
func (m *Message) writeTo(w *bufio.Writer, scratch *[]byte) (n int64, err error) {
	for _, p := range m.parts {
		if !p.quoted {
			k, err := w.Write(p.b)
			if n += int64(k); err != nil {
				return n, err
			}
			continue
		}
		for rest := p.b; len(rest) > 0; {
			k := min(len(rest), quoteChunk)
			for k < len(rest) && !utf8.RuneStart(rest[k]) {
				k++ // escape whole characters: the escaping of each depends on it alone
			}
			*scratch = appendQuoted((*scratch)[:0], rest[:k])
			written, err := w.Write(*scratch)
			if n += int64(written); err != nil {
				return n, err
			}
			rest = rest[k:]
		}
	}
	return n, nil
}

// appendQuoted appends src escaped as the contents of a JSON string (no
// quotes around it), as the encoder writes strings with encodeOpts:
// invalid UTF-8 replaced, and U+2028 and U+2029 escaped for JavaScript.
// Runs of printable ASCII, most of a large result, are copied as they
// are, as are valid characters outside ASCII; control characters are
// escaped by the encoder.
func appendQuoted(dst, src []byte) []byte {
	for len(src) > 0 {
		n := plainPrefix(src)
		dst = append(dst, src[:n]...)
		src = src[n:]
		switch {
		case len(src) == 0:
		case src[0] == '"' || src[0] == '\\':
			dst = append(dst, '\\', src[0])
			src = src[1:]
		case src[0] >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(src)
			switch {
			case r == utf8.RuneError && n == 1:
				dst = utf8.AppendRune(dst, utf8.RuneError) // invalid UTF-8 is replaced
			case r == '\u2028' || r == '\u2029':
				dst = fmt.Appendf(dst, `\u%04x`, r)
			default:
				dst = append(dst, src[:n]...)
			}
			src = src[n:]
		default: // a control character
			dst = appendEscaped(dst, src[:1])
			src = src[1:]
		}
	}
	return dst
}

// appendEscaped appends src escaped by the encoder.
func appendEscaped(dst, src []byte) []byte {
	start := len(dst)
	dst, _ = jsontext.AppendQuote(dst, src)
	return append(dst[:start], dst[start+1:len(dst)-1]...)
}

// plainPrefix returns the length of src's longest prefix of bytes that a
// JSON string holds as they are: printable ASCII but '"' and '\\'. It
// looks at 8 bytes at a time while all 8 are such bytes.
func plainPrefix(src []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		q := x ^ (ones * '"')
		b := x ^ (ones * '\\')
		// A high bit set in each term marks a byte that is, in turn, below
		// 0x20, '"', '\\' (a zero byte after the XOR), or outside ASCII.
		if (x-ones*' ')&^x&highs|(q-ones)&^q&highs|(b-ones)&^b&highs|x&highs != 0 {
			break
		}
	}
	for i < len(src) && plain[src[i]] {
		i++
	}
	return i
}

// plain tells the bytes plainPrefix looks for.
var plain = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// outbox takes messages for the one writer goroutine of a stream. It never
// blocks its senders: what it queues was counted against a budget first.
// It is safe for concurrent use.
type outbox struct {
	w    *bufio.Writer
	wake chan struct{} // tells the writer there is work (buffered, 1)
	done chan struct{} // closed when the writer has returned
	// yield, when set, is called after the writer has written what was
	// queued, before it looks for more and flushes: messages about to be
	// sent may then join the same write.
	yield func()

	mu     sync.Mutex
	queue  []Message
	closed bool  // no more messages are taken
	err    error // the write error; read after done is closed
}

func newOutbox(w io.Writer) *outbox {
	return &outbox{w: bufio.NewWriterSize(w, 64<<10), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues m. Once the outbox is closed, or a write failed, m is
// dropped, and what it holds released.
func (o *outbox) Send(m Message) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		m.Release()
		return
	}
	o.queue = append(o.queue, m)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// close makes the writer write what is queued, flush and return.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run is the writer: the only goroutine that writes to the stream. It
// returns when closed and drained, or at the first failed write.
func (o *outbox) run() {
	defer close(o.done)
	var scratch []byte
	for {
		o.mu.Lock()
		msgs, closed := o.queue, o.closed
		o.queue = nil
		o.mu.Unlock()
		for i := range msgs {
			var err error
			if len(msgs[i].parts) > 0 { // not the end of a request without a response
				_, err = msgs[i].writeTo(o.w, &scratch)
				if err == nil {
					err = o.w.WriteByte('\n')
				}
			}
			m := msgs[i]
			msgs[i] = Message{} // written: the collector may have its bytes back before the batch ends
			m.Release()
			if err != nil {
				o.fail(err, msgs[i+1:])
				return
			}
		}
		if cap(scratch) > 2*quoteChunk {
			scratch = nil
		}
		if len(msgs) > 0 {
			if o.yield != nil {
				o.yield()
			}
			continue // more may have come meanwhile: flush once they stop
		}
		if err := o.w.Flush(); err != nil {
			o.fail(err, nil)
			return
		}
		if closed {
			return
		}
		<-o.wake
	}
}

// fail records the write error that ends the stream and drops every
// message not written.
func (o *outbox) fail(err error, unwritten []Message) {
	o.mu.Lock()
	o.err, o.closed = err, true
	unwritten = append(unwritten, o.queue...)
	o.queue = nil
	o.mu.Unlock()
	for i := range unwritten {
		unwritten[i].Release()
	}
}
