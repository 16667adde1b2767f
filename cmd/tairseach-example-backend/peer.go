package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// peer is the client at the other end of a connection (tairseach-mcp), as
// the handler answering a request on it sees it. While it works, a
// handler may send the client notifications (progress, log messages) and
// requests of its own (questions for the client's user, its model, its
// roots), and read the client's answers, all on the request's connection
// and before its reply (docs/backend-protocol.md). The client sends
// nothing else there meanwhile; a line that is not an answer (a client
// that sends its next request early) is kept, in order, for the
// connection to serve after the reply.
//
// A nil *peer is a request that cannot speak, one of a batch: notify
// does nothing, and ask fails with errMute. A peer's methods are safe
// for concurrent use by the goroutines of the handler that has it; the
// connection's serveConn uses it between requests.
type peer struct {
	c   net.Conn
	sc  *bufio.Scanner
	log zerolog.Logger

	wmu sync.Mutex // one line written at a time
	rmu sync.Mutex // held by the goroutine that reads the connection

	mu     sync.Mutex             // guards what follows
	asked  map[string]chan answer // requests sent and not answered yet, by id as JSON
	queued [][]byte               // lines read during a call that are not answers
	held   int                    // the bytes of queued
	err    error                  // why the connection cannot be read any more
}

// errMute is ask's error for a request that cannot speak.
var errMute = errors.New("a request in a batch cannot ask the client anything")

// errGone wraps the error of a wait whose connection failed first.
var errGone = errors.New("the connection closed before the client answered")

func newPeer(c net.Conn, log zerolog.Logger) *peer {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &peer{c: c, sc: sc, log: log}
}

// notify sends the client a notification. It fails when the connection
// does, which tells a long handler that nobody waits for it any more.
func (p *peer) notify(method string, params any) error {
	if p == nil {
		return nil
	}
	return p.send(outgoing{JSONRPC: "2.0", Method: method, Params: params})
}

// outgoing is a notification or a request of the handler's, its members
// in the usual order.
type outgoing struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// question is a request of the handler's to the client, waiting for its
// answer.
type question struct {
	p       *peer
	id      string
	method  string
	answers chan answer
}

// ask sends the client a request of the handler's, with MCP's method and
// params, and id (a string) naming it; the answer is waited for with the
// question's wait. An id may be asked again once its answer came.
func (p *peer) ask(id, method string, params any) (*question, error) {
	if p == nil {
		return nil, errMute
	}
	if id == "" {
		return nil, errors.New("a request to the client needs an id")
	}
	key, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	q := &question{p: p, id: string(key), method: method, answers: make(chan answer, 1)}
	p.mu.Lock()
	if p.asked[q.id] != nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("a request %s is waiting for its answer already", key)
	}
	if p.asked == nil {
		p.asked = map[string]chan answer{}
	}
	p.asked[q.id] = q.answers
	p.mu.Unlock()
	if err := p.send(outgoing{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		p.forget(q.id)
		return nil, err
	}
	return q, nil
}

// call asks the client and waits for its answer.
func (p *peer) call(ctx context.Context, id, method string, params any) (json.RawMessage, error) {
	q, err := p.ask(id, method, params)
	if err != nil {
		return nil, err
	}
	return q.wait(ctx)
}

// answer is the client's answer to a question: a result, or its error.
type answer struct {
	result json.RawMessage
	err    *rpcError
}

// wait waits for the client's answer to q: its result, or its error as
// an *rpcError; or an error wrapping errGone when the connection fails
// first, or ctx's when ctx ends first (which leaves the connection
// unreadable: it is for the server's shutdown).
func (q *question) wait(ctx context.Context) (json.RawMessage, error) {
	p := q.p
	defer p.forget(q.id)
	for {
		p.rmu.Lock()
		select {
		case r := <-q.answers: // read by another waiter meanwhile
			p.rmu.Unlock()
			if r.err != nil {
				return nil, r.err
			}
			return r.result, nil
		default:
		}
		err := p.readOne(ctx)
		p.rmu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %s %s: %w", errGone, q.method, q.id, err)
		}
	}
}

// readOne reads one line and hands it to whoever it is for; the caller
// holds rmu. Once a read failed, every read fails with its error.
func (p *peer) readOne(ctx context.Context) error {
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { p.c.SetReadDeadline(time.Now()) })
	ok := p.sc.Scan()
	stop()
	if !ok {
		err := p.sc.Err()
		if err == nil {
			err = io.EOF
		}
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		return err
	}
	line := bytes.TrimSpace(p.sc.Bytes())
	if len(line) == 0 {
		return nil
	}
	if id, r, ok := asResponse(line); ok {
		p.route(id, r)
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held+len(line) > maxLine {
		// A client that floods a call with requests is not served more.
		p.err = fmt.Errorf("more than %d bytes of requests sent while a request was answered", maxLine)
		return p.err
	}
	p.queued = append(p.queued, bytes.Clone(line))
	p.held += len(line)
	return nil
}

// route hands an answer to the question waiting for it; an answer to no
// question (one the client sent after its call ended) is dropped.
func (p *peer) route(id []byte, r answer) {
	p.mu.Lock()
	answers := p.asked[string(id)]
	delete(p.asked, string(id))
	p.mu.Unlock()
	if answers == nil {
		p.log.Debug().RawJSON("id", id).Msg("dropped an answer to no question")
		return
	}
	answers <- r // buffered, and sent once: it was taken out of asked
}

func (p *peer) forget(id string) {
	p.mu.Lock()
	delete(p.asked, id)
	p.mu.Unlock()
}

// next returns the connection's next request line: one kept while a
// request was answered, or the next one read. Answers that come between
// requests, after their call ended, are dropped. It reports false when
// the connection cannot be read any more (err says why).
func (p *peer) next() ([]byte, bool) {
	for {
		p.mu.Lock()
		if len(p.queued) > 0 {
			line := p.queued[0]
			p.queued = p.queued[1:]
			p.held -= len(line)
			p.mu.Unlock()
			return line, true
		}
		err := p.err
		p.mu.Unlock()
		if err != nil || !p.sc.Scan() {
			return nil, false
		}
		// A copy: a handler that reads the connection reuses the buffer.
		line := bytes.Clone(p.sc.Bytes())
		if id, _, ok := asResponse(bytes.TrimSpace(line)); ok {
			p.log.Debug().RawJSON("id", id).Msg("dropped an answer to no question")
			continue
		}
		return line, true
	}
}

// readErr is why the connection could not be read any more, or nil at
// its end.
func (p *peer) readErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil && !errors.Is(p.err, io.EOF) {
		return p.err
	}
	return p.sc.Err()
}

// send writes v as one line.
func (p *peer) send(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // strings and ids go as they are
	if err := enc.Encode(v); err != nil {
		return err
	}
	return p.write(buf.Bytes())
}

func (p *peer) write(line []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := p.c.Write(line)
	return err
}

// asResponse reads line as an answer of the client's: an object with an
// id and a result or an error, and no method. It returns the id as
// compact JSON.
func asResponse(line []byte) ([]byte, answer, bool) {
	if len(line) == 0 || line[0] != '{' {
		return nil, answer{}, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return nil, answer{}, false
	}
	id, hasID := m["id"]
	result, hasResult := m["result"]
	rawErr, hasErr := m["error"]
	if _, hasMethod := m["method"]; hasMethod || !hasID || hasResult == hasErr {
		return nil, answer{}, false
	}
	var compact bytes.Buffer
	if json.Compact(&compact, id) != nil {
		return nil, answer{}, false
	}
	if hasResult {
		return compact.Bytes(), answer{result: result}, true
	}
	e := &rpcError{}
	if json.Unmarshal(rawErr, e) != nil {
		e = &rpcError{Code: codeInternalError, Message: "the client's error could not be read: " + string(rawErr)}
	}
	return compact.Bytes(), answer{err: e}, true
}

// The codes of the errors the client's answers come with
// (docs/backend-protocol.md), besides the specification's.
const (
	codeMissingCapability = -32021 // the client did not declare what the question needs
	codeTimeout           = -32001 // nobody answered in time, or too many questions wait
	codeCancelled         = -32000 // the call ended before the client answered
)

// need is what a method asks its client for, as its messages say it.
type need struct {
	method     string // the request, e.g. "sampling/createMessage"
	doing      string // what the method cannot do without an answer, e.g. "summarize"
	what       string // what the client must offer, e.g. "sampling"
	capability string // MCP's name of the capability, e.g. "sampling"
}

// failed turns the error of a question the method asked for n into the
// method's error, in words a model can act on: a client without the
// capability, nobody answering in time, the call ending first, the
// client's own error. The bridge's code is kept, and its data when the
// capability is missing (data.requiredCapabilities).
func (n need) failed(ctx context.Context, err error) error {
	var re *rpcError
	switch {
	case errors.Is(err, errMute):
		return &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("cannot %s in a batch: send the request on its own, so that it can ask the client", n.doing)}
	case ctx.Err() != nil:
		return &rpcError{Code: codeShuttingDown, Message: "interrupted: the backend is shutting down"}
	case errors.Is(err, errGone):
		return &rpcError{Code: codeCancelled, Message: fmt.Sprintf("cancelled: the connection closed before the client answered %s", n.method)}
	case !errors.As(err, &re):
		return err
	}
	switch re.Code {
	case codeMissingCapability:
		return &rpcError{Code: re.Code, Message: fmt.Sprintf("this client cannot %s: it offers no %s (MCP %s capability)", n.doing, n.what, n.capability), Data: re.Data}
	case codeMethodNotFound:
		return &rpcError{Code: re.Code, Message: fmt.Sprintf("cannot %s: the bridge does not pass %s on to its client (%s)", n.doing, n.method, re.Message)}
	case codeTimeout, codeCancelled:
		return &rpcError{Code: re.Code, Message: fmt.Sprintf("cannot %s: %s", n.doing, re.Message)}
	}
	return &rpcError{Code: re.Code, Message: fmt.Sprintf("cannot %s: the client answered %s with error %d: %s", n.doing, n.method, re.Code, re.Message), Data: re.Data}
}
