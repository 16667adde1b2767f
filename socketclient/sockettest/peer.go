package sockettest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Peer is the client at the other end of a request's connection, for a
// Handler that speaks during a call, as a backend may: it sends
// notifications and requests of its own before its answer, and reads the
// client's responses. Its methods are safe for concurrent use. A Peer is
// valid while its connection is open.
type Peer struct {
	sc *serverConn
}

// peerState is a connection's record of its requests to the client that
// await a response.
type peerState struct {
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[string]chan response // by id as sent
}

// response is the client's response to a request of the handler's.
type response struct {
	result jsontext.Value
	err    *Error
}

// ErrGone is Peer.Call's error when the connection closes before the
// client answers.
var ErrGone = errors.New("sockettest: the connection closed before the client answered")

// Notify sends a notification to the client.
func (p *Peer) Notify(method string, params any) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params}, json.Deterministic(true))
	if err != nil {
		return err
	}
	if !p.sc.write(append(b, '\n')) {
		return ErrGone
	}
	return nil
}

// Call sends the client a request and waits for its response: the result,
// or an *Error for a JSON-RPC error, or ctx's error, or ErrGone. id is the
// request's id, a string or an integer; nil picks a number of its own.
func (p *Peer) Call(ctx context.Context, id any, method string, params any) (jsontext.Value, error) {
	if id == nil {
		id = p.sc.peer.next.Add(1)
	}
	rawID, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	replies := make(chan response, 1)
	ps := &p.sc.peer
	ps.mu.Lock()
	if ps.waiting == nil {
		ps.waiting = map[string]chan response{}
	}
	ps.waiting[string(rawID)] = replies
	ps.mu.Unlock()
	defer func() {
		ps.mu.Lock()
		delete(ps.waiting, string(rawID))
		ps.mu.Unlock()
	}()
	msg := map[string]any{"jsonrpc": "2.0", "id": jsontext.Value(rawID), "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	if !p.sc.write(append(b, '\n')) {
		return nil, ErrGone
	}
	select {
	case r := <-replies:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Send writes line as it is, a newline added: for a handler that
// misbehaves mid-call.
func (p *Peer) Send(line string) error {
	if !p.sc.write([]byte(line + "\n")) {
		return ErrGone
	}
	return nil
}

// route hands a response from the client to the request waiting for it,
// and reports whether one was.
func (ps *peerState) route(id jsontext.Value, r response) bool {
	ps.mu.Lock()
	replies, ok := ps.waiting[string(id)]
	delete(ps.waiting, string(id))
	ps.mu.Unlock()
	if ok {
		replies <- r // buffered
	}
	return ok
}

// asResponse reads line as a response from the client (an id and a
// result or an error, no method), or reports false.
func asResponse(line []byte) (jsontext.Value, response, bool) {
	var m struct {
		ID     jsontext.Value `json:"id"`
		Method jsontext.Value `json:"method"`
		Result jsontext.Value `json:"result"`
		Error  *struct {
			Code    int64          `json:"code"`
			Message string         `json:"message"`
			Data    jsontext.Value `json:"data"`
		} `json:"error"`
		JSONRPC string `json:"jsonrpc"`
	}
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &m) != nil || m.Method != nil || m.ID == nil {
		return nil, response{}, false
	}
	if m.Error != nil {
		return m.ID, response{err: &Error{Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}}, true
	}
	if m.Result == nil {
		return nil, response{}, false
	}
	return m.ID, response{result: m.Result}, true
}
