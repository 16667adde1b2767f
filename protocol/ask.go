package protocol

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// How a call asks its client something: the user, to confirm a
// destructive call or to fill in a form; the client's model, for a
// completion; the client's roots. Every era and transport asks through
// ask. Up to 2025-11-25 the question is a request of the server's on the
// session, on the call's own stream; in 2026-07-28 it is an entry of an
// input_required result, and the client's retry brings the answer (see
// parked.go). Every wait for a person is bounded by the server's
// AskTimeout, and does not count against the call's own time.

// Error codes of a question the client was not asked, or did not answer.
const (
	// CodeMissingCapability is 2026-07-28's code for a request that needs
	// a capability the client did not declare; data.requiredCapabilities
	// names it. Questions use it in every era.
	CodeMissingCapability = -32021
	// CodeRequestTimeout answers a question nobody answered in time, or
	// one refused because too many calls wait for answers.
	CodeRequestTimeout = -32001
	// CodeRequestCancelled answers a question whose call ended first.
	CodeRequestCancelled = -32000
)

// Defaults for the zero values of Server's limits of questions.
const (
	DefaultAskTimeout     = 5 * time.Minute
	DefaultMaxPendingAsks = 8
)

// maxQuestions bounds the questions of one call waiting for answers at
// once.
const maxQuestions = 32

// clientCaps are what a client declared it can be asked.
type clientCaps struct {
	Sampling *struct {
		Context jsontext.Value `json:"context"`
		Tools   jsontext.Value `json:"tools"`
	} `json:"sampling"`
	Elicitation *struct {
		Form jsontext.Value `json:"form"`
		URL  jsontext.Value `json:"url"`
	} `json:"elicitation"`
	Roots      jsontext.Value            `json:"roots"`
	Extensions map[string]jsontext.Value `json:"extensions"` // 2026-07-28
}

// tasks reports whether the client declared the 2026-07-28 tasks
// extension.
func (c clientCaps) tasks() bool { return c.Extensions[tasksExtension].Kind() == '{' }

// capsOf reads a client's capabilities; a malformed object declares none.
func capsOf(raw jsontext.Value) clientCaps {
	var c clientCaps
	if raw != nil && json.Unmarshal(raw, &c, json.RejectUnknownMembers(false)) != nil {
		return clientCaps{}
	}
	return c
}

// canElicitForm reports whether the client declared form elicitation: an
// elicitation member with a form member, or with neither form nor url
// (what 2025-06-18 had, which means form).
func (c clientCaps) canElicitForm() bool {
	return c.Elicitation != nil && (c.Elicitation.Form != nil || c.Elicitation.URL == nil)
}

// missing returns, as data.requiredCapabilities says it, the capability
// the client must have declared to be asked method with params (the
// sub-capability the params need, such as sampling.tools), or nil when
// it declared it.
func (c clientCaps) missing(method string, params jsontext.Value) jsontext.Value {
	switch method {
	case "elicitation/create":
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p, json.RejectUnknownMembers(false))
		if p.Mode == "url" {
			if c.Elicitation == nil || c.Elicitation.URL == nil {
				return jsontext.Value(`{"elicitation":{"url":{}}}`)
			}
		} else if !c.canElicitForm() {
			return jsontext.Value(`{"elicitation":{"form":{}}}`)
		}
	case "sampling/createMessage":
		var p struct {
			IncludeContext string         `json:"includeContext"`
			Tools          jsontext.Value `json:"tools"`
		}
		_ = json.Unmarshal(params, &p, json.RejectUnknownMembers(false))
		switch {
		case c.Sampling == nil:
			return jsontext.Value(`{"sampling":{}}`)
		case p.Tools != nil && c.Sampling.Tools == nil:
			return jsontext.Value(`{"sampling":{"tools":{}}}`)
		case p.IncludeContext != "" && p.IncludeContext != "none" && c.Sampling.Context == nil:
			return jsontext.Value(`{"sampling":{"context":{}}}`)
		}
	case "roots/list":
		if c.Roots == nil {
			return jsontext.Value(`{"roots":{}}`)
		}
	}
	return nil
}

// question is one question of a 2026-07-28 call waiting for its answer.
type question struct {
	name, method string
	params       jsontext.Value
	answered     chan jsontext.Value // buffered: the answer, once
	round        int                 // the input_required result it was last sent in; 0 before
}

// ask asks the client method with params, as the call's question name,
// and returns the client's result. backend marks a question of the
// provider's own (the backend's), which counts against the server's
// MaxPendingAsks.
func (c *Call) ask(ctx context.Context, name, method string, params any, backend bool) (jsontext.Value, error) {
	if c.srv == nil {
		return nil, ErrNotSupported
	}
	raw, ok := params.(jsontext.Value)
	if !ok {
		b, err := json.Marshal(params, encodeOpts)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	if len(raw) == 0 || raw.Kind() == 'n' {
		raw = jsontext.Value("{}")
	}
	if raw.Kind() != '{' {
		return nil, &Error{Code: CodeInvalidParams, Message: method + ": params must be an object"}
	}
	need := c.caps.missing(method, raw)
	if need == nil && method == "elicitation/create" && !c.versionElicits() {
		need = jsontext.Value(`{"elicitation":{"form":{}}}`) // declared, in a version without it
	}
	confirm := name == confirmKey && !backend // the bridge's own question
	owner := need != nil && c.toOwner(method, raw)
	if need != nil && !owner {
		data, _ := json.Marshal(map[string]jsontext.Value{"requiredCapabilities": need}, encodeOpts)
		return nil, &Error{Code: CodeMissingCapability, Message: fmt.Sprintf("the client did not declare the capability %s needs: %s", method, need), Data: data}
	}
	if backend && !c.startBackendAsk() {
		return nil, &Error{Code: CodeRequestTimeout, Message: fmt.Sprintf("too many calls wait for answers (%d); ask again later", orDefault(c.srv.MaxPendingAsks, DefaultMaxPendingAsks))}
	}
	if backend {
		defer c.stopBackendAsk()
	}
	// The call's own time stops first: a deadline taken from it now would
	// be its own, which stops too. A task is input_required meanwhile.
	defer c.taskChanged()
	c.pauseTimeouts()
	defer c.resumeTimeouts()
	timeout := orDefault(c.srv.AskTimeout, DefaultAskTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var res jsontext.Value
	var err error
	who := "the client"
	switch {
	case owner:
		who = "the owner"
		res, err = c.askOwner(ctx, raw, need, confirm)
	case c.modernEra:
		res, err = c.askInResult(ctx, name, method, raw)
	default:
		if t := c.taskOf(); t != nil {
			// 2025-11-25: a request about a task says so, once the client
			// knows the task: after the response that created it, and
			// on one stream (stdio) once the client has asked about it
			// (after the answer to its tasks/get, or while it waits on
			// tasks/result: see task.know). There the question would
			// otherwise follow the response closely enough for a client
			// to read both at once and take the question first, for a
			// task it does not know yet (the official requester then
			// declines it). Once the response is written, the task's
			// status says input_required.
			raw = relatedTask(raw, t.id)
			select {
			case <-t.told:
			case <-ctx.Done():
			}
			t.changed()
			if c.attached().ss.oneStream() {
				select {
				case <-t.known:
				case <-ctx.Done():
				}
			}
		}
		at := c.attached()
		res, err = at.ss.request(ctx, at.rq.out, method, raw)
	}
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() == context.DeadlineExceeded:
		return nil, &Error{Code: CodeRequestTimeout, Message: fmt.Sprintf("timed out: %s did not answer %s within %s", who, method, timeout)}
	case ctx.Err() != nil || err == errSessionEnded:
		return nil, &Error{Code: CodeRequestCancelled, Message: "cancelled: the call ended before " + who + " answered " + method}
	}
	return nil, err
}

// askInResult asks a 2026-07-28 question: from the request's own answers
// when they hold it, else in an input_required result, the call parked
// until the client's retry brings the answer.
func (c *Call) askInResult(ctx context.Context, name, method string, params jsontext.Value) (jsontext.Value, error) {
	c.mu.Lock()
	if a, ok := c.answers[name]; ok {
		delete(c.answers, name)
		if checkAnswer(method, a) == nil {
			c.mu.Unlock()
			return a, nil
		}
		// Not the result the question asks for: no answer, asked again.
	}
	if c.asked == nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: a request of this method cannot ask the client in the middle", ErrNotSupported)
	}
	if len(c.questions) >= maxQuestions {
		c.mu.Unlock()
		return nil, &Error{Code: CodeRequestTimeout, Message: fmt.Sprintf("too many questions of this call wait for answers (%d)", maxQuestions)}
	}
	// A task's questions are named once in its life: an answer never
	// meets a question it was not given for.
	for base, i := name, 2; c.questions[name] != nil || c.tk != nil && c.tk.used[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	q := &question{name: name, method: method, params: params, answered: make(chan jsontext.Value, 1)}
	if c.questions == nil {
		c.questions = map[string]*question{}
	}
	c.questions[name] = q
	var t *task
	if c.tk != nil && c.tk.task != nil {
		t = c.tk.task
		if c.tk.used == nil {
			c.tk.used = map[string]bool{}
		}
		c.tk.used[name] = true
	}
	c.mu.Unlock()
	select {
	case c.asked <- struct{}{}:
	default:
	}
	if t != nil {
		t.changed()
	}
	select {
	case a := <-q.answered:
		return a, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.questions, name)
		c.mu.Unlock()
		select {
		case a := <-q.answered: // answered meanwhile
			return a, nil
		default:
			return nil, ctx.Err()
		}
	}
}

// checkAnswer checks that a client's answer has the shape of method's
// result, as far as a provider relies on it.
func checkAnswer(method string, a jsontext.Value) error {
	switch method {
	case "elicitation/create":
		var r struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal(a, &r, json.RejectUnknownMembers(false)); err != nil {
			return fmt.Errorf("not an elicitation result: %s", describe(err))
		}
		if r.Action != "accept" && r.Action != "decline" && r.Action != "cancel" {
			return fmt.Errorf("an elicitation result with action %q", r.Action)
		}
	case "sampling/createMessage":
		var r struct {
			Role    string         `json:"role"`
			Content jsontext.Value `json:"content"`
		}
		if err := json.Unmarshal(a, &r, json.RejectUnknownMembers(false)); err != nil || r.Role == "" || r.Content == nil {
			return fmt.Errorf("not a sampling result (a role and content)")
		}
	case "roots/list":
		var r struct {
			Roots []jsontext.Value `json:"roots"`
		}
		if err := json.Unmarshal(a, &r, json.RejectUnknownMembers(false)); err != nil || r.Roots == nil {
			return fmt.Errorf("not a list of roots")
		}
	}
	return nil
}

// startBackendAsk counts one more question of the provider's waiting for
// its answer; the first makes the call one of those that wait, unless
// MaxPendingAsks calls already do. stopBackendAsk counts it answered.
func (c *Call) startBackendAsk() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.backendAsks == 0 && !c.srv.startAsking() {
		return false
	}
	c.backendAsks++
	return true
}

func (c *Call) stopBackendAsk() {
	c.mu.Lock()
	c.backendAsks--
	last := c.backendAsks == 0
	c.mu.Unlock()
	if last {
		c.srv.stopAsking()
	}
}

// startAsking counts a call that waits for the client's answers, unless
// MaxPendingAsks calls already do; stopAsking counts it done. Lock order:
// a Call's mu, then the server's.
func (s *Server) startAsking() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asking >= orDefault(s.MaxPendingAsks, DefaultMaxPendingAsks) {
		return false
	}
	s.asking++
	return true
}

func (s *Server) stopAsking() {
	s.mu.Lock()
	s.asking--
	s.mu.Unlock()
}

// WithTimeout returns a context that ends when ctx does, or once the call
// has spent d of its own time: the time it waits for a person or the
// client's model (Confirm, Elicit, Sample, Roots) does not count. Its Err
// is then context.DeadlineExceeded. The caller calls cancel once done.
func (c *Call) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	pt := &pausedTimeout{left: d, since: time.Now()}
	pt.ctx.t = pt
	pt.ctx.Context, pt.cancel = context.WithCancel(ctx)
	// Whole before the call's questions can see it: pauseTimeouts pauses
	// every timer it finds in c.timers.
	pt.timer = time.AfterFunc(d, pt.fire)
	c.mu.Lock()
	if c.asking > 0 {
		pt.pause() // under c.mu: no resumeTimeouts slips in between
	}
	c.timers = append(c.timers, pt)
	c.mu.Unlock()
	return &pt.ctx, func() {
		pt.timer.Stop()
		pt.cancel()
		c.mu.Lock()
		for i, t := range c.timers {
			if t == pt {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
	}
}

// pauseTimeouts stops the call's own time while it asks; resumeTimeouts
// starts it again once no question waits. Both hold c.mu while they do
// (lock order: c.mu, then a timer's), so that two questions that start
// and end at once cannot leave the clock running while one waits.
func (c *Call) pauseTimeouts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asking++; c.asking == 1 {
		for _, t := range c.timers {
			t.pause()
		}
	}
}

func (c *Call) resumeTimeouts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asking--; c.asking == 0 {
		for _, t := range c.timers {
			t.resume()
		}
	}
}

// timeoutCtx is the context of a pausedTimeout: its Err is
// context.DeadlineExceeded once the timeout fired, as
// context.WithTimeout's is, so that callers tell a timeout from a
// cancellation as they always do.
type timeoutCtx struct {
	context.Context
	fired atomic.Bool
	t     *pausedTimeout
}

// Deadline is when the timeout fires if the call asks nothing more, or
// the parent's deadline when that is sooner; while the call asks, only
// the parent's.
func (c *timeoutCtx) Deadline() (time.Time, bool) {
	parent, ok := c.Context.Deadline()
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if c.t.paused {
		return parent, ok
	}
	mine := c.t.since.Add(c.t.left)
	if ok && parent.Before(mine) {
		return parent, true
	}
	return mine, true
}

func (c *timeoutCtx) Err() error {
	err := c.Context.Err()
	if err != nil && c.fired.Load() {
		return context.DeadlineExceeded
	}
	return err
}

// pausedTimeout is a timeout whose clock stops while its call asks.
type pausedTimeout struct {
	ctx    timeoutCtx
	cancel context.CancelFunc
	timer  *time.Timer

	mu     sync.Mutex
	left   time.Duration // before it fires, counted from since while running
	since  time.Time
	paused bool
}

func (t *pausedTimeout) fire() {
	if t.ctx.Context.Err() == nil { // not cancelled before
		t.ctx.fired.Store(true)
	}
	t.cancel()
}

func (t *pausedTimeout) pause() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.paused && t.timer.Stop() {
		t.left -= time.Since(t.since)
		t.paused = true
	}
}

func (t *pausedTimeout) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused {
		t.paused, t.since = false, time.Now()
		t.timer.Reset(max(t.left, 0))
	}
}
