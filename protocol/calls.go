package protocol

import (
	"context"
	"fmt"
	"sync/atomic"
)

// flight is a request running on a goroutine of its own (tools/call,
// subscriptions/listen, …), registered so that notifications/cancelled
// can reach it. It holds the request's Call, which its handler passes to
// the provider.
type flight struct {
	call      Call
	info      methodInfo
	p         params
	b         *batch // the batch it belongs to, or nil
	cancel    context.CancelFunc
	cancelled atomic.Bool // by the client: no response is written

	lists       listKind              // the lists whose changes a listen stream announces; guarded by ss.mu
	taskIDs     []string              // the tasks whose status a listen stream announces; guarded by ss.mu
	listsQueued [numLists]atomic.Bool // a list_changed of each list is queued on it and not yet written
}

// errShuttingDown answers a call that cannot start because the session
// is ending.
var errShuttingDown = &Error{Code: CodeInternalError, Message: "server is shutting down"}

// startCall registers a call, within its limits, and starts its
// goroutine, which the session owns: Close and Drained wait for it
// through calls. A tool call takes a place among the admitted ones first:
// up to MaxInFlight run and as many wait in line, each on its own
// goroutine, so cancellations, pings and lists still get through. Only
// past that does the reader wait, which pushes back on the client.
func (ss *Session) startCall(ctx context.Context, rq *request, info methodInfo, p params, b *batch) {
	isStream := info.flags&stream != 0
	if !isStream {
		select {
		case ss.admitted <- struct{}{}:
		case <-ss.stopped:
			ss.reply(b, rq, errorMsg(rq.id, errShuttingDown))
			return
		}
	}
	f := &flight{info: info, p: p, b: b}
	rq.flight = f
	f.call = Call{srv: ss.srv, principal: ss.principal, version: rq.version, modernEra: rq.modern,
		denySampling: ss.denySampling, denyElicitation: ss.denyElicitation, owner: ss.askOwner}
	f.call.at = attachment{ss: ss, rq: rq, hold: rq.hold}
	if token := progressToken(p); token != nil {
		f.call.at.progress = newProgress(token)
	}
	if !isStream {
		f.call.client = ss.clientOf(rq, p.meta())
		f.call.caps = ss.capsOf(rq, p.meta())
	}
	ss.mu.Lock()
	var refuse *Error
	switch _, dup := ss.inflight[string(rq.id)]; {
	case ss.stopping:
		refuse = errShuttingDown
	case dup:
		refuse = &Error{Code: CodeInvalidRequest, Message: "a request with this id is already in flight"}
	case isStream && ss.listens >= maxListens:
		refuse = &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("too many open streams and waits (subscriptions/listen, tasks/result) (%d); end one first", maxListens)}
	}
	if refuse != nil {
		ss.mu.Unlock()
		if !isStream {
			<-ss.admitted
		}
		ss.reply(b, rq, errorMsg(rq.id, refuse))
		return
	}
	if isStream {
		ss.listens++
	}
	ctx, f.cancel = context.WithCancel(ctx)
	ss.inflight[string(rq.id)] = f
	ss.calls.Add(1)
	ss.mu.Unlock()
	ss.runner.run(func() { f.run(ctx) })
}

// run waits for a slot to run in, runs the call and sends its response.
// It ends when the handler returns (bounded by the call's timeout or
// cancellation).
func (f *flight) run(ctx context.Context) {
	ss, rq, isStream := f.call.at.ss, f.call.at.rq, f.info.flags&stream != 0
	defer ss.calls.Done()
	defer f.cancel()
	answer := func() Message {
		res, err := ss.handle(ctx, rq, f.info, f.p)
		return ss.encode(rq, f.info, res, err)
	}
	var resp Message
	if isStream {
		resp = answer()
	} else {
		ran := false
		select {
		case ss.sem <- struct{}{}:
			// The server's slots, shared fairly by its sessions' principals.
			if ss.srv.running.Acquire(ctx, ss.principal) == nil {
				resp, ran = answer(), true
				ss.srv.running.Release(ss.principal)
			}
			<-ss.sem
		case <-ctx.Done():
		}
		<-ss.admitted
		if !ran { // cancelled while in line
			resp = errorMsg(rq.id, errShuttingDown)
		}
	}
	ss.mu.Lock()
	delete(ss.inflight, string(rq.id))
	if isStream {
		ss.listens--
	}
	ss.mu.Unlock()
	if f.cancelled.Load() {
		ss.log.Debug().Str("method", rq.method).Msg("request cancelled by client, no response")
		resp = Message{} // but a batch still counts it as answered
	}
	ss.reply(f.b, rq, resp)
}
