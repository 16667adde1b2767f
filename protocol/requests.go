package protocol

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// clientReply is the client's response to a request of the server's.
type clientReply struct {
	result jsontext.Value
	err    *Error
}

// request sends the client a request of the server's own, on out, and
// waits for the client's response, ctx's end, or the session's end. Its
// id is the server's ("tairseach-N"), never confused with the client's:
// a response is told from a request by its members, and only responses
// are routed here. When ctx ends first the client is told the request is
// cancelled (notifications/cancelled), and a late response is dropped.
func (ss *Session) request(ctx context.Context, out Sink, method string, params any) (jsontext.Value, error) {
	id := jsontext.Value(strconv.Quote("tairseach-" + strconv.FormatUint(ss.nextRequest.Add(1), 10)))
	replies := make(chan clientReply, 1)
	ss.mu.Lock()
	if ss.stopping {
		ss.mu.Unlock()
		return nil, errSessionEnded
	}
	ss.pending[string(id)] = replies
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.pending, string(id))
		ss.mu.Unlock()
	}()
	msg, err := json.Marshal(&outMessage{JSONRPC: "2.0", ID: id, Method: method, Params: params}, encodeOpts)
	if err != nil {
		return nil, err
	}
	ss.budget.take(len(msg))
	ss.sendTaken(out, msg, nil, true)
	select {
	case r := <-replies:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		ss.notify(out, encodeNotification("notifications/cancelled", &struct {
			RequestID jsontext.Value `json:"requestId"`
			Reason    string         `json:"reason"`
		}{id, "the request it was made for ended"}), nil)
		return nil, ctx.Err()
	case <-ss.stopped:
		return nil, errSessionEnded
	}
}

// errSessionEnded ends a request of the server's whose session ended: no
// response can come.
var errSessionEnded = errors.New("the client's session ended")

// routeReply hands the client's response to the request of the server's
// that waits for it. A response to an id the server is not waiting for
// (never sent, answered already, given up on) is dropped with a log line.
func (ss *Session) routeReply(id jsontext.Value, reply clientReply) {
	ss.mu.Lock()
	replies, ok := ss.pending[string(id)]
	delete(ss.pending, string(id))
	ss.mu.Unlock()
	if !ok {
		ss.log.Debug().Str("id", safetext.Field(string(id), maxLogged)).Msg("ignoring a response to no request of ours")
		return
	}
	replies <- reply // buffered: the waiter may be gone
}

// replyOf reads a response from the client: its result, or its error.
func replyOf(result, errObj jsontext.Value) (clientReply, error) {
	if errObj != nil {
		var e Error
		if err := json.Unmarshal(errObj, &e); err != nil {
			return clientReply{}, fmt.Errorf("a malformed error: %s", describe(err))
		}
		return clientReply{err: &e}, nil
	}
	return clientReply{result: result}, nil
}
