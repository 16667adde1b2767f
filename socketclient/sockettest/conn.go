package sockettest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A connection's side of the fake backend: reading requests, in lines
// or as a streaming parser reads them, and answering them, faults
// included.

// close closes the connection and cancels its context; it may be called
// from any goroutine, more than once.
func (sc *serverConn) close() {
	sc.once.Do(func() {
		sc.cancel()
		sc.nc.Close()
		s := sc.s
		s.mu.Lock()
		delete(s.conns, sc)
		s.open--
		s.mu.Unlock()
	})
}

// write sends b whole; false means the connection is gone.
func (sc *serverConn) write(b []byte) bool {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	_, err := sc.nc.Write(b)
	return err == nil
}

// serve reads the lines of sc until it closes. Reading goes on while a
// line is answered, so that a client hanging up cancels the handler's
// context at once, as it would on the real backend; a StreamingParser
// reads the next request only once it has answered one.
func (s *Server) serve(ctx context.Context, sc *serverConn) {
	var answering sync.WaitGroup // the goroutines below; serve waits for them
	defer answering.Wait()
	defer sc.close()

	if s.StreamingParser {
		next := readValues(sc.nc)
		for {
			line, err := next()
			if err != nil || !s.answer(ctx, sc, withPeer(s.parseLine(line), sc)) {
				return
			}
		}
	}
	lines := make(chan []item, 16)
	if !s.Concurrent {
		answering.Add(1)
		// The one answerer of a sequential connection ends when the
		// connection closes.
		go func() {
			defer answering.Done()
			for {
				select {
				case items := <-lines:
					if !s.answer(ctx, sc, items) {
						sc.close()
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	next := readLines(sc.nc)
	for {
		line, err := next()
		if err != nil {
			return // a partial last line is dropped, as the client is gone
		}
		if id, r, ok := asResponse(line); ok && sc.peer.route(id, r) {
			continue // the client's answer to a handler's request
		}
		items := withPeer(s.parseLine(line), sc)
		if s.Concurrent {
			answering.Add(1)
			// Answers one line; ends early if the connection closes.
			go func() {
				defer answering.Done()
				if !s.answer(ctx, sc, items) {
					sc.close()
				}
			}()
			continue
		}
		select {
		case lines <- items:
		case <-ctx.Done():
			return
		}
	}
}

// readLines returns a func that reads the next non-blank line from r,
// without its newline and surrounding white space.
func readLines(r io.Reader) func() ([]byte, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	return func() ([]byte, error) {
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return nil, err
			}
			if line = bytes.TrimSpace(line); len(line) > 0 {
				return line, nil
			}
		}
	}
}

// readValues returns a func that reads the next JSON value from r a byte
// at a time, leaving what follows the value unread (see StreamingParser).
// Repeated names and invalid UTF-8 pass, for parseLine to answer as it
// would on a line.
func readValues(r io.Reader) func() ([]byte, error) {
	d := jsontext.NewDecoder(byteReader{r}, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return func() ([]byte, error) {
		v, err := d.ReadValue()
		return v.Clone(), err
	}
}

// byteReader reads at most one byte per Read from r.
type byteReader struct{ r io.Reader }

func (b byteReader) Read(p []byte) (int, error) { return b.r.Read(p[:min(len(p), 1)]) }

// item is one message of a line: a request to answer, or the error reply
// to a malformed one.
type item struct {
	req   Request
	reply []byte // set for a malformed message: the whole answer
	batch bool   // the item came in a batch
}

// parseLine splits a line into its messages and records the requests.
func (s *Server) parseLine(line []byte) []item {
	if !jsontext.Value(line).IsValid() {
		return []item{{reply: errorReply(nil, -32700, "Parse error", nil)}}
	}
	if line[0] != '[' {
		return []item{s.parseMessage(line)}
	}
	var elems []jsontext.Value
	json.Unmarshal(line, &elems) // valid JSON, and an array
	if len(elems) == 0 {
		return []item{{reply: errorReply(nil, -32600, "Invalid Request", nil)}}
	}
	items := make([]item, len(elems))
	for i, e := range elems {
		items[i] = s.parseMessage(e)
		items[i].batch = true
	}
	return items
}

func (s *Server) parseMessage(raw []byte) item {
	var m struct {
		ID     jsontext.Value `json:"id"`
		Method jsontext.Value `json:"method"`
		Params jsontext.Value `json:"params"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return item{reply: errorReply(nil, -32600, "Invalid Request", nil)}
	}
	var name string
	if m.Method.Kind() != '"' || json.Unmarshal(m.Method, &name) != nil {
		return item{reply: errorReply(m.ID, -32600, "Invalid Request", nil)}
	}
	req := Request{ID: m.ID, Method: name, Params: m.Params}
	s.record(req)
	return item{req: req}
}

// withPeer returns items whose requests can reach sc's client.
func withPeer(items []item, sc *serverConn) []item {
	for i := range items {
		items[i].req.Peer = &Peer{sc: sc}
	}
	return items
}

// answer answers the items of one line; false means the connection is
// finished (closed by a fault, or gone).
func (s *Server) answer(ctx context.Context, sc *serverConn, items []item) bool {
	delay, faultFn := s.knobs()
	if !items[0].batch {
		it := items[0]
		switch {
		case it.reply != nil:
			return sc.write(it.reply)
		case it.req.ID == nil:
			s.handler(ctx, it.req)
			return true
		}
		fault := FaultNone
		if faultFn != nil {
			fault = faultFn(it.req)
		}
		return sleep(ctx, delay) && s.answerOne(ctx, sc, it.req, fault)
	}
	if !sleep(ctx, delay) {
		return false
	}
	out := []byte{'['}
	for _, it := range items {
		switch {
		case it.reply != nil:
			out = append(out, bytes.TrimSuffix(it.reply, []byte{'\n'})...)
		case it.req.ID == nil:
			s.handler(ctx, it.req)
			continue
		default:
			result, err := s.handler(ctx, it.req)
			out = append(out, bytes.TrimSuffix(reply(it.req.ID, result, err), []byte{'\n'})...)
		}
		out = append(out, ',')
	}
	if len(out) == 1 {
		return true // all notifications: no answer at all
	}
	out[len(out)-1] = ']'
	return sc.write(append(out, '\n'))
}

// answerOne answers a single request, misbehaving as fault says.
func (s *Server) answerOne(ctx context.Context, sc *serverConn, req Request, fault Fault) bool {
	switch fault {
	case FaultNeverReply:
		if s.Concurrent {
			return true // only this request goes unanswered
		}
		<-ctx.Done()
		return false
	case FaultGarbage:
		return sc.write([]byte("this is not json\n"))
	case FaultCloseBeforeReply:
		return false
	case FaultHugeReply:
		s.writeHuge(sc, req.ID)
		return true
	}
	result, err := s.handler(ctx, req)
	id := req.ID
	if fault == FaultWrongID {
		id = wrongID(id)
	}
	b := reply(id, result, err)
	if fault == FaultCloseMidReply {
		sc.write(b[:len(b)/2])
		return false
	}
	return sc.write(b)
}

// writeHuge writes a reply line of s.HugeSize bytes, newline included, a
// piece at a time, so that it never exists whole in memory.
func (s *Server) writeHuge(sc *serverConn, id jsontext.Value) {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	head := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":"`...)
	tail := []byte("\"}\n")
	if _, err := sc.nc.Write(head); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte{'x'}, 64<<10)
	for n := s.HugeSize - len(head) - len(tail); n > 0; n -= len(chunk) {
		if _, err := sc.nc.Write(chunk[:min(n, len(chunk))]); err != nil {
			return // the client gave up
		}
	}
	sc.nc.Write(tail)
}

// wrongID returns an id that is not id: the next integer (the likeliest
// mix-up), or a string.
func wrongID(id jsontext.Value) jsontext.Value {
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil && n < math.MaxInt64 {
		return strconv.AppendInt(nil, n+1, 10)
	}
	return jsontext.Value(`"not-your-id"`)
}

// reply encodes the answer to the request with id.
func reply(id jsontext.Value, result any, err error) []byte {
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: -32603, Message: err.Error()}
		}
		return errorReply(id, e.Code, e.Message, e.Data)
	}
	raw, ok := result.(jsontext.Value)
	if !ok {
		var merr error
		if raw, merr = json.Marshal(result, json.Deterministic(true)); merr != nil {
			return errorReply(id, -32603, "encode result: "+merr.Error(), nil)
		}
	}
	if len(raw) == 0 {
		raw = jsontext.Value("null")
	}
	if bytes.IndexByte(raw, '\n') >= 0 {
		raw = raw.Clone()
		if err := raw.Compact(); err != nil {
			return errorReply(id, -32603, "handler result is not JSON: "+err.Error(), nil)
		}
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"result":`...)
	out = append(out, raw...)
	return append(out, "}\n"...)
}

// errorReply encodes an error answer; a nil id is sent as null.
func errorReply(id jsontext.Value, code int64, message string, data any) []byte {
	if id == nil {
		id = jsontext.Value("null")
	}
	obj, err := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitzero"`
	}{code, message, data}, json.Deterministic(true))
	if err != nil {
		return errorReply(id, -32603, "encode error data: "+err.Error(), nil)
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"error":`...)
	out = append(out, obj...)
	return append(out, "}\n"...)
}

// sleep waits d unless ctx ends first; false means it did.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
