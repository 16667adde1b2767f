package protocol

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// handleBatch answers a JSON array of messages. Batches exist only in
// protocol 2025-03-26; in every other version the array is refused whole.
func (ss *session) handleBatch(ctx context.Context, line []byte) {
	var elems []jsontext.Value
	// Each element is decoded by itself, strictly, below.
	if err := json.Unmarshal(line, &elems, lenient, jsontext.AllowDuplicateNames(true)); err != nil {
		ss.out.send(encodeError(nullID, &Error{Code: CodeParseError, Message: describe(err)}))
		return
	}
	if v := ss.legacyVersion(); v != Version20250326 {
		ss.out.send(encodeError(nullID, &Error{
			Code:    CodeInvalidRequest,
			Message: fmt.Sprintf("JSON-RPC batches are not supported in protocol version %s (only in 2025-03-26)", v),
		}))
		return
	}
	if len(elems) == 0 {
		ss.out.send(encodeError(nullID, &Error{Code: CodeInvalidRequest, Message: "empty batch"}))
		return
	}
	b := &batch{ss: ss, pending: len(elems), resps: make([][]byte, len(elems)),
		limit: orDefault(ss.srv.MaxPendingBytes, DefaultMaxPendingBytes)}
	for i, e := range elems {
		rq, ignore, errID, err := decodeMessage(e)
		rq.pos = i
		switch {
		case err != nil:
			b.add(i, errID, encodeError(errID, WireError(err)))
		case ignore:
			b.add(i, nil, nil)
		case rq.method == "initialize" && rq.id != nil:
			b.add(i, rq.id, encodeError(rq.id, &Error{Code: CodeInvalidRequest, Message: "initialize must not be part of a batch"}))
		default:
			ss.dispatch(ctx, &rq, b)
		}
	}
}

// batch gathers the responses to one batch and sends them as one array,
// in the order of the requests, once every element is answered. Their
// bytes are bounded by limit.
type batch struct {
	ss    *session
	limit int

	mu      sync.Mutex
	pending int      // elements not answered yet
	size    int      // bytes of resps
	resps   [][]byte // by position in the batch; nil for none
}

// add records the response to the element at pos, whose id is id (nil
// for elements that get none). A response that would take the batch past
// its limit is replaced by an error, so every request still gets exactly
// one answer.
func (b *batch) add(pos int, id jsontext.Value, resp []byte) {
	b.mu.Lock()
	if resp != nil && b.size+len(resp)+1 > b.limit {
		resp = encodeError(id, &Error{
			Code:    CodeInternalError,
			Message: fmt.Sprintf("response dropped: this batch's responses exceed %d bytes; send fewer requests per batch", b.limit),
		})
	}
	if resp != nil {
		b.size += len(resp) + 1
	}
	b.resps[pos] = resp
	b.pending--
	done := b.pending == 0
	b.mu.Unlock()
	if !done || b.size == 0 {
		return
	}
	out := make([]byte, 0, b.size+1)
	for _, r := range b.resps {
		if r != nil {
			out = append(out, ',')
			out = append(out, r...)
		}
	}
	out[0] = '['
	b.ss.out.send(append(out, ']'))
}
