package protocol

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// handleBatch answers a JSON array of messages, whose bytes h counts.
// Batches exist only in protocol 2025-03-26; in every other version the
// array is refused whole.
func (ss *Session) handleBatch(ctx context.Context, out Sink, line []byte, h *hold) {
	refuse := func(e *Error) { ss.reply(nil, &request{out: out, hold: h}, errorMsg(nullID, e)) }
	var elems []jsontext.Value
	// Each element is decoded by itself, strictly, below.
	if err := json.Unmarshal(line, &elems, lenient, jsontext.AllowDuplicateNames(true)); err != nil {
		refuse(&Error{Code: CodeParseError, Message: describe(err)})
		return
	}
	if v := ss.legacyVersion(); v != Version20250326 {
		refuse(&Error{
			Code:    CodeInvalidRequest,
			Message: fmt.Sprintf("JSON-RPC batches are not supported in protocol version %s (only in 2025-03-26)", v),
		})
		return
	}
	if len(elems) == 0 {
		refuse(&Error{Code: CodeInvalidRequest, Message: "empty batch"})
		return
	}
	b := &batch{ss: ss, out: out, hold: h, pending: len(elems), resps: make([][]byte, len(elems)),
		limit: orDefault(ss.srv.MaxHeldBytes, DefaultMaxHeldBytes)}
	for i, e := range elems {
		rq, ignore, errID, err := decodeMessage(e)
		rq.pos, rq.out, rq.hold = i, out, ss.budget.newHold()
		switch {
		case err != nil:
			b.add(&rq, errorMsg(errID, WireError(err)))
		case ignore:
			b.add(&rq, Message{})
		case rq.reply != nil:
			ss.routeReply(rq.id, *rq.reply)
			b.add(&rq, Message{})
		case rq.method == "initialize" && rq.id != nil:
			b.add(&rq, errorMsg(rq.id, &Error{Code: CodeInvalidRequest, Message: "initialize must not be part of a batch"}))
		default:
			ss.dispatch(ctx, &rq, b)
		}
	}
}

// batch gathers the responses to one batch and sends them as one array,
// in the order of the requests, once every element is answered. Their
// bytes are bounded by limit.
type batch struct {
	ss    *Session
	out   Sink
	hold  *hold // the batch's own bytes, then the array's
	limit int

	mu      sync.Mutex
	pending int      // elements not answered yet
	size    int      // bytes of resps
	resps   [][]byte // by position in the batch; nil for none
	holds   []*hold  // the elements', released with the array
}

// add records the response to rq, an element (m without parts for none).
// A response that would take the batch past its limit is replaced by an
// error, so every request still gets exactly one answer.
func (b *batch) add(rq *request, m Message) {
	var resp []byte
	if m.parts != nil {
		resp = m.Bytes()
		rq.hold.charge(len(resp))
	}
	b.mu.Lock()
	if resp != nil && b.size+len(resp)+1 > b.limit {
		resp = encodeError(rq.id, &Error{
			Code:    CodeInternalError,
			Message: fmt.Sprintf("response dropped: this batch's responses exceed %d bytes; send fewer requests per batch", b.limit),
		})
	}
	if resp != nil {
		b.size += len(resp) + 1
	}
	b.resps[rq.pos] = resp
	b.holds = append(b.holds, rq.hold)
	b.pending--
	done := b.pending == 0
	b.mu.Unlock()
	if !done {
		return
	}
	release := func() {
		b.hold.finish()
		for _, h := range b.holds {
			h.finish()
		}
	}
	if b.size == 0 { // no responses: every request was cancelled
		b.out.Send(Message{done: release, final: true})
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
	out = append(out, ']')
	b.hold.charge(len(out))
	array := msgOf(out, release)
	array.final = true
	b.out.Send(array)
}
