package protocol

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// In protocol 2026-07-28 a question to the client is an entry of an
// input_required result, and the client retries the request with the
// answer. A provider that asks in the middle of its work (the backend
// asking its user, say) cannot start again: its call is parked. The
// provider runs on, on a goroutine of the server's, its backend call open,
// and the request is answered input_required with the questions and a
// requestState naming the parked call; the retry that carries the
// answers takes the call over, and gets its result, or the next
// questions. A question nobody answers within AskTimeout is answered
// "timed out" to the provider, which then ends as it will. A retry whose
// parked call is gone (its provider ended meanwhile, or another process
// issued the state) runs the request afresh, and the provider's questions
// are answered from the retry's answers, by name.

// parked is a 2026-07-28 call that may ask its client something.
type parked struct {
	id     string
	call   *Call
	cancel context.CancelFunc // ends the provider's context
	done   chan struct{}      // closed once the provider returned
	res    any                // what it returned
	err    error
	hold   *hold    // counts what the provider reads while no request has the call
	origin *Session // the session of the request that started it

	owned    bool  // a request waits for it now; guarded by the server's mu
	finished bool  // its provider returned; guarded by the server's mu
	task     *task // the task whose result it is, once it is one's; guarded by the server's mu
}

// gatherFor is how long a parked call's request waits, after the first
// question of a round, for more that come together (the backend asking
// several questions at once), before it answers input_required.
const gatherFor = 20 * time.Millisecond

// inputParams are the params every request that may answer
// input_required takes.
type inputParams struct {
	InputResponses jsontext.Value `json:"inputResponses"` // 2026-07-28: the client's answers
	RequestState   *string        `json:"requestState"`   // 2026-07-28: what the server asked
}

// inputOr is embedded in the results of the methods that may answer
// input_required instead (2026-07-28).
type inputOr struct {
	input *inputRequiredResult
}

// encodeInput encodes the input_required result, when there is one.
func (r *inputOr) encodeInput(id jsontext.Value, tail resultTail) (Message, bool, error) {
	if r.input == nil {
		return Message{}, false, nil
	}
	tail.ResultType = "input_required"
	r.input.resultTail = tail
	b, err := encodeResult(id, r.input)
	return msgOf(b, nil), true, err
}

// runAsking runs run, a provider's work for rq with call, and returns
// what it returned and the call it ran with; or, in 2026-07-28, the
// input_required result that asks what the work asked meanwhile. key
// names the request in the requestStates it issues (method, name or URI,
// arguments).
func runAsking[R any](ss *Session, ctx context.Context, rq *request, call *Call, in *inputParams, key stateKey, run func(context.Context, *Call) (R, error)) (R, *inputRequiredResult, *Call, error) {
	var none R
	if !rq.modern && rq.task == nil {
		res, err := run(ctx, call)
		return res, nil, call, err
	}
	res, input, ran, err := ss.runParked(ctx, rq, call, in, key, func(ctx context.Context, call *Call) (any, error) { return run(ctx, call) })
	r, ok := res.(R)
	if !ok {
		r = none
	}
	return r, input, ran, err
}

// runParked runs run on a parked call (a new one, or the one the
// request's state names), and waits for its result or its next
// questions.
func (ss *Session) runParked(ctx context.Context, rq *request, call *Call, in *inputParams, key stateKey, run func(context.Context, *Call) (any, error)) (any, *inputRequiredResult, *Call, error) {
	answers, err := decodeAnswers(in.InputResponses)
	if err != nil {
		return nil, nil, call, err
	}
	srv := ss.srv
	var pk *parked
	if in.RequestState != nil {
		st, err := srv.inputStates().verify(*in.RequestState, key, call.principal)
		if err != nil {
			return nil, nil, call, srv.refuse(call, key, err)
		}
		if st.Park != "" {
			pk = srv.takeParked(st.Park)
		}
		if err := srv.inputStates().spend(st); err != nil {
			if pk != nil {
				srv.releaseParked(pk)
			}
			return nil, nil, call, srv.refuse(call, key, err)
		}
		if st.Confirm && call.modern != nil {
			if raw, ok := answers[confirmKey]; ok {
				a, err := answerOf(raw)
				if err != nil {
					return nil, nil, call, fmt.Errorf("%w: %s: \"inputResponses\": %w", ErrInvalidParams, rq.method, err)
				}
				call.modern.answer = &a
			}
		}
	}
	delete(answers, confirmKey) // only ever answered with its own state
	if pk == nil {
		pk = srv.startParked(ctx, call, answers, run)
	} else {
		call = pk.call
		call.attach(attachment{ss: ss, rq: rq, hold: rq.hold, progress: rq.flight.call.at.progress})
		call.deliver(answers)
	}
	res, input, err := ss.awaitParked(ctx, pk, key)
	return res, input, pk.call, err
}

// awaitParked waits, for rq, for pk's result or its next questions.
//
// A call that may run as a task (its request reserved one) becomes it
// once its gate opens (see startGate): awaitParked then returns
// errBecomeTask.
func (ss *Session) awaitParked(ctx context.Context, pk *parked, key stateKey) (any, *inputRequiredResult, error) {
	call := pk.call
	if call.unanswered() {
		// Asked before, and not answered by this retry: asked again.
		return nil, ss.parkFor(pk, key), nil
	}
	var gate <-chan struct{} // nil, which never fires, unless a task is reserved
	if at := call.attached(); at.rq != nil && at.rq.task != nil {
		var stop func()
		gate, stop = call.startGate(orDefault(ss.srv.TaskAfter, DefaultTaskAfter))
		defer stop()
	}
	for {
		select {
		case <-pk.done:
			ss.srv.endParked(pk)
			return pk.res, nil, pk.err
		case <-ctx.Done():
			pk.cancel()
			<-pk.done
			ss.srv.endParked(pk)
			return pk.res, nil, pk.err
		case <-gate:
			if !call.askingFirst() {
				return nil, nil, errBecomeTask
			}
			gate = nil // it answers with its confirmation: no task
			continue
		case <-call.asked:
		}
		// Questions asked together are asked in one result.
		t := time.NewTimer(gatherFor)
		select {
		case <-t.C:
		case <-pk.done:
			t.Stop()
		}
		if call.unsent() {
			return nil, ss.parkFor(pk, key), nil
		}
	}
}

// parkFor parks pk, whose call has questions waiting, and returns the
// input_required result that asks them, with a requestState naming pk.
func (ss *Session) parkFor(pk *parked, key stateKey) *inputRequiredResult {
	call := pk.call
	qs := call.detach(pk.hold)
	ss.srv.parkAgain(pk)
	state, err := ss.srv.inputStates().issue(key, call.principal, pk.id, false)
	if err != nil { // the arguments were digested when the state was checked: never
		ss.log.Error().Err(err).Msg("cannot issue a requestState")
	}
	in := &inputRequiredResult{InputRequests: map[string]inputRequest{}, RequestState: state}
	for _, q := range qs {
		in.InputRequests[q.name] = inputRequest{Method: q.method, Params: q.params}
	}
	ss.log.Debug().Str("method", key.method).Int("questions", len(qs)).Msg("asked the client in the result")
	return in
}

// decodeAnswers reads a request's inputResponses: an object whose members
// are objects, or none. Whether each is the result its question asked
// for is checked when it is delivered: one that is not is no answer, and
// its question is asked again.
func decodeAnswers(raw jsontext.Value) (map[string]jsontext.Value, error) {
	answers := map[string]jsontext.Value{}
	if raw == nil {
		return answers, nil
	}
	if raw.Kind() != '{' {
		return nil, fmt.Errorf(`%w: "inputResponses" must be an object of answers`, ErrInvalidParams)
	}
	if err := json.Unmarshal(raw, &answers); err != nil {
		return nil, fmt.Errorf(`%w: "inputResponses" must be an object of answers: %s`, ErrInvalidParams, describe(err))
	}
	for name, a := range answers {
		if a.Kind() != '{' {
			return nil, fmt.Errorf(`%w: "inputResponses": the answer %q is not an object`, ErrInvalidParams, name)
		}
	}
	return answers, nil
}

// startParked starts run on a goroutine of the server's, for call, whose
// questions are answered from answers first.
func (s *Server) startParked(ctx context.Context, call *Call, answers map[string]jsontext.Value, run func(context.Context, *Call) (any, error)) *parked {
	var id [16]byte
	rand.Read(id[:])
	pk := &parked{id: hex.EncodeToString(id[:]), call: call, done: make(chan struct{}), hold: s.total().newHold(), owned: true, origin: call.attached().ss}
	call.mu.Lock()
	call.answers, call.asked, call.park = answers, make(chan struct{}, 1), pk
	call.mu.Unlock()
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pk.cancel = cancel
	s.mu.Lock()
	if s.parked == nil {
		s.parked = map[string]*parked{}
	}
	s.parked[pk.id] = pk
	s.mu.Unlock()
	// Owned by the server: it ends when run returns, which its call's
	// timeout, pk.cancel and the questions' AskTimeout bound.
	go func() {
		defer close(pk.done)
		defer cancel()
		pk.res, pk.err = s.runRecovered(pctx, call, run)
		s.mu.Lock()
		pk.finished = true
		t, owned := pk.task, pk.owned
		if !owned && t == nil {
			delete(s.parked, pk.id) // nobody will come for the result
		}
		s.mu.Unlock()
		switch {
		case t != nil:
			t.finish(pk.res, pk.err) // the task keeps the result
		case !owned:
			pk.hold.finish()
		}
	}()
	return pk
}

// CancelParked cancels every 2026-07-28 call parked for its client's
// answers: their questions are answered "cancelled", and their providers
// end. A transport calls it when it shuts down.
func (s *Server) CancelParked() { s.cancelParked(nil) }

// cancelParked cancels the parked calls that started in origin, or all
// when origin is nil.
func (s *Server) cancelParked(origin *Session) {
	s.mu.Lock()
	var pks []*parked
	for _, pk := range s.parked {
		if origin == nil || pk.origin == origin {
			pks = append(pks, pk)
		}
	}
	s.mu.Unlock()
	for _, pk := range pks {
		pk.cancel()
	}
}

// runRecovered runs run; a panic is the provider's bug, logged and
// answered as an internal error.
func (s *Server) runRecovered(ctx context.Context, call *Call, run func(context.Context, *Call) (any, error)) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			if s.Logger != nil {
				s.Logger.Error().Interface("panic", v).Bytes("stack", debug.Stack()).Msg("parked call panicked")
			}
			res, err = nil, ErrInternal
		}
	}()
	return run(ctx, call)
}

// takeParked returns the parked call id names, now owned by the caller,
// or nil when it is gone or owned already.
func (s *Server) takeParked(id string) *parked {
	s.mu.Lock()
	defer s.mu.Unlock()
	pk := s.parked[id]
	if pk == nil || pk.owned {
		return nil
	}
	select {
	case <-pk.done:
		delete(s.parked, id)
		return nil
	default:
	}
	pk.owned = true
	return pk
}

// releaseParked gives back a parked call taken for a retry that was
// refused.
func (s *Server) releaseParked(pk *parked) {
	s.mu.Lock()
	pk.owned = false
	s.mu.Unlock()
}

// parkAgain keeps pk for the retry that will take it over.
func (s *Server) parkAgain(pk *parked) {
	s.mu.Lock()
	pk.owned = false
	select {
	case <-pk.done:
		delete(s.parked, pk.id)
	default:
	}
	s.mu.Unlock()
}

// endParked forgets pk, whose result its owner has.
func (s *Server) endParked(pk *parked) {
	s.mu.Lock()
	delete(s.parked, pk.id)
	s.mu.Unlock()
	pk.hold.finish()
}

// refuse tells Server.Refused of a refused requestState, and returns the
// request's error.
func (s *Server) refuse(call *Call, key stateKey, err error) error {
	if se, ok := err.(*stateError); ok && s.Refused != nil && key.method == "tools/call" {
		s.Refused(call, &CallToolRequest{Name: key.name, Arguments: key.args}, se.reason)
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalidParams, key.method, err)
}

// attach makes the call answer the request of at.
func (c *Call) attach(at attachment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = at
}

// detach parks the call: no request has it, and what it reads is counted
// with h. It returns every question waiting, in the order of their
// names, marked sent in a new round.
func (c *Call) detach(h *hold) []*question {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = attachment{hold: h}
	var qs []*question
	for _, q := range c.questions {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b *question) int { return strings.Compare(a.name, b.name) })
	c.round++
	for _, q := range qs {
		q.round = c.round
	}
	return qs
}

// deliver answers the waiting questions that answers answer with the
// result they asked for; the others wait on, and are asked again.
// Answers to no question are ignored.
func (c *Call) deliver(answers map[string]jsontext.Value) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, a := range answers {
		if q := c.questions[name]; q != nil && checkAnswer(q.method, a) == nil {
			delete(c.questions, name)
			q.answered <- a
		}
	}
}

// unanswered reports whether questions sent in an earlier round still
// wait for their answers.
func (c *Call) unanswered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.questions {
		if q.round > 0 {
			return true
		}
	}
	return false
}

// unsent reports whether questions wait that no result has asked yet.
func (c *Call) unsent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.questions {
		if q.round == 0 {
			return true
		}
	}
	return false
}

// progressToken returns the progress token of params, or nil when it
// carries none a client could match: a string or an integer, as the
// schema says, so what makes a valid request id. Anything else (null,
// which some clients send for "none", an object, a fraction) is no
// token: echoed, it would make notifications the client finds invalid.
func progressToken(p params) jsontext.Value {
	if token := p.meta().ProgressToken; validID(token) {
		return token
	}
	return nil
}
