package protocol

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Which tools/call becomes a task, and when. A call may run as a task
// when its tool allows it (a manifest's execution.taskSupport, optional or
// required) and its client can take one: in 2025-11-25 when the request
// asks for one (params.task), in 2026-07-28 when the request declares the
// io.modelcontextprotocol/tasks extension. Such a call starts as any
// other, on a parked call (parked.go), and becomes a task once it has
// worked TaskAfter of its own time, or as soon as its provider reports
// progress (a backend that reports progress says its work takes a while).
// Until then it is an ordinary call: the user's confirmation of a
// destructive call and the backend's first questions are asked on the
// tools/call itself (in 2026-07-28 an input_required result, the time
// spent waiting for answers not counted), and a call that finishes first
// is answered at once, in 2026-07-28 with its result (most calls take
// milliseconds: no task, no polling), in 2025-11-25, which promises a
// task, with a task that has ended already.

// taskParams are the params.task of a 2025-11-25 tools/call that asks
// for a task: the time to live the client would like, in milliseconds.
type taskParams struct {
	TTL *int64 `json:"ttl"`
}

// tasksExtension names the 2026-07-28 tasks extension.
const tasksExtension = "io.modelcontextprotocol/tasks"

// errNeedsTasksExtension is 2026-07-28's refusal of a request that needs
// the tasks extension from a client that did not declare it.
func errNeedsTasksExtension(what string) *Error {
	return &Error{Code: CodeMissingCapability, Data: jsontext.Value(`{"requiredCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}`),
		Message: "Missing required client capability: " + what + " needs the " + tasksExtension + " extension in the request's clientCapabilities"}
}

// taskPlan decides whether the tools/call rq of the tool p.Name may run
// as a task: it returns the task reserved for it, nil for an ordinary
// call, or the error that refuses the call.
func (ss *Session) taskPlan(rq *request, call *Call, p *callParams) (*task, error) {
	support := ss.tools.Tools().TaskSupport(p.Name)
	var wanted bool
	switch {
	case rq.modern:
		wanted = call.caps.tasks()
		if support == TaskRequired && !wanted {
			return nil, errNeedsTasksExtension("tool " + p.Name + ", which runs only as a task,")
		}
	case p.Task != nil && rq.version == Version20251125:
		if !support.allows() {
			if !ss.tools.Tools().Has(p.Name) {
				return nil, nil // the provider says it is unknown
			}
			return nil, fmt.Errorf("%w: tools/call: tool %q does not run as a task (its taskSupport is forbidden): call it without params.task", ErrMethodNotFound, p.Name)
		}
		wanted = true
	case support == TaskRequired:
		how := "call it with params.task"
		if rq.version != Version20251125 {
			how = "protocol " + rq.version + " cannot ask for a task; use 2025-11-25 or later"
		}
		return nil, fmt.Errorf("%w: tools/call: tool %q runs only as a task: %s", ErrMethodNotFound, p.Name, how)
	}
	if !wanted || !support.allows() {
		return nil, nil
	}
	var ttl time.Duration
	if p.Task != nil && p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = time.Duration(min(*p.Task.TTL, int64(365*24*time.Hour/time.Millisecond))) * time.Millisecond
	}
	t, err := ss.srv.tasks().reserve(ss.owner, p.Name, ttl)
	if err != nil {
		if support == TaskOptional {
			ss.log.Debug().Str("tool", p.Name).Err(err).Msg("tool call runs as an ordinary call: the task store is full")
			return nil, nil
		}
		return nil, err
	}
	call.tk = &callTask{}
	return t, nil
}

// callTask is what a Call that may run as a task, or is one, keeps of it.
type callTask struct {
	openGate  context.CancelFunc // makes it a task at once (its first progress)
	task      *task              // the task it runs as, once it is one
	asksFirst bool               // it keeps a confirmation for its request's result: it is no task yet
	used      map[string]bool    // the task's question names, never used twice
	progress  *progressParams    // its latest progress before it was a task: the task's first statusMessage
}

// errBecomeTask is awaitParked's answer when the call it waits for should
// become the task its request reserved.
var errBecomeTask = errors.New("the call becomes a task")

// startGate starts the time after which the call, which may run as a
// task, becomes one: d of its own time (not counting the time it waits
// for answers), or its provider's first progress, whichever comes first.
// It returns the channel closed then, and stop, which the caller calls
// once it waits no more.
func (c *Call) startGate(d time.Duration) (<-chan struct{}, func()) {
	opened, open := context.WithCancel(context.Background())
	ctx, cancel := c.WithTimeout(opened, d)
	c.mu.Lock()
	c.tk.openGate = open
	progressed := c.tk.progress != nil // before the gate was there to see it
	c.mu.Unlock()
	if progressed {
		open()
	}
	return ctx.Done(), func() {
		c.mu.Lock()
		c.tk.openGate = nil
		c.mu.Unlock()
		cancel()
		open()
	}
}

// callAsTask runs the tools/call rq on a parked call that becomes the
// task t when its gate opens (see awaitParked), and returns the result
// that says so; or, when the call finishes or asks first, what an
// ordinary call returns, t forgotten.
func (ss *Session) callAsTask(ctx context.Context, rq *request, call *Call, p *callParams, t *task, key stateKey) (*CallToolResult, *inputRequiredResult, *Call, error) {
	rq.task = t
	res, input, ran, err := runAsking(ss, ctx, rq, call, &p.inputParams, key, func(ctx context.Context, call *Call) (*CallToolResult, error) {
		return ss.tools.CallTool(ctx, call, &CallToolRequest{Name: p.Name, Arguments: p.Arguments})
	})
	if errors.Is(err, errBecomeTask) || err == nil && input == nil && !rq.modern && ctx.Err() == nil {
		// In 2025-11-25, which promised a task, a call that finished
		// first becomes a task that has ended already.
		ss.becomeTask(rq, t, ran.park)
		return nil, nil, ran, errBecomeTask
	}
	ss.srv.tasks().unreserve(t)
	return res, input, ran, err
}

// becomeTask makes pk, the parked call of rq, the task t, and publishes
// it: its call detached from rq, its result to go to the store.
func (ss *Session) becomeTask(rq *request, t *task, pk *parked) {
	srv := ss.srv
	call := pk.call
	t.call, t.pk = call, pk
	var legacy *Session
	if !rq.modern {
		legacy = ss
		t.legacy = ss
	}
	if p := call.runAsTask(t, pk.hold, legacy, rq.era); p != nil {
		t.progress(p.Progress, p.Total, p.Message)
	}
	rq.task = t
	srv.tasks().publish(t)
	srv.mu.Lock()
	finished := pk.finished
	if !finished {
		pk.task = t
	}
	if srv.parked[pk.id] == pk {
		delete(srv.parked, pk.id) // no requestState reaches it now
	}
	srv.mu.Unlock()
	if finished {
		<-pk.done // it ended meanwhile: its result is the task's, which its creation tells
		t.mu.Lock()
		t.quiet = true
		t.mu.Unlock()
		t.finish(pk.res, pk.err)
	}
	ss.log.Debug().Str("tool", t.tool).Str("task", t.id).Msg("tool call became a task")
}

// runAsTask detaches the call from its request: it runs as the task t,
// what it reads counted with h. In 2025-11-25 (legacy set) the questions
// its provider asks go to the client on legacy's own stream, until a
// request about the task says where else. It returns the call's latest
// progress, or nil.
func (c *Call) runAsTask(t *task, h *hold, legacy *Session, e era) *progressParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ss := c.at.ss; ss != nil {
		c.transport, c.sessionID = ss.transport, ss.id // for the records, once no request has it
	}
	c.tk.task = t
	c.at = attachment{hold: h}
	if legacy != nil {
		c.at.ss, c.at.rq = legacy, &request{out: legacy.out, era: era{version: e.version, logLevel: logOff}}
	}
	return c.tk.progress
}

// attachLegacy makes the 2025-11-25 task t's questions and notifications
// go to ss, on out: the session that asked about it last, or the stream
// of a tasks/result that waits for it (waits counts them: while one does,
// the others' requests leave its questions where they are).
func (t *task) attachLegacy(ss *Session, out Sink, waits int) {
	t.mu.Lock()
	t.resultWaits += waits
	if waits <= 0 && t.resultWaits > 0 {
		t.mu.Unlock()
		return
	}
	t.legacy = ss
	t.mu.Unlock()
	c := t.call
	c.mu.Lock()
	if c.tk.task == t {
		c.at.ss, c.at.rq = ss, &request{out: out, era: era{version: ss.legacyVersion(), logLevel: logOff}}
	}
	c.mu.Unlock()
	// A question already sent that waits for a stream to the client (an
	// HTTP session with no GET stream open) goes to this one.
	if r, ok := ss.out.(interface{ Redirect(Sink) }); ok && waits > 0 {
		r.Redirect(out)
	}
}

// askingFirst reports whether the call keeps a confirmation for its
// request's result, which a task cannot answer.
func (c *Call) askingFirst() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tk != nil && c.tk.asksFirst
}

// taskOf returns the task the call runs as, or nil.
func (c *Call) taskOf() *task {
	if c.tk == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tk.task
}

// InTask reports whether the call runs as a task, or may become one: its
// own time (WithTimeout) is then bounded by the provider's task timeout,
// not by its call timeout.
func (c *Call) InTask() bool { return c.tk != nil }

// TaskID returns the id of the task the call runs as, or "".
func (c *Call) TaskID() string {
	if t := c.taskOf(); t != nil {
		return t.id
	}
	return ""
}

// waiting reports whether the call, a task's, waits for the client's
// answers, and in 2026-07-28 returns the questions waiting.
func (c *Call) waiting() (bool, map[string]inputRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.modernEra {
		return c.asking > 0, nil
	}
	if len(c.questions) == 0 {
		return false, nil
	}
	qs := make(map[string]inputRequest, len(c.questions))
	for name, q := range c.questions {
		qs[name] = inputRequest{Method: q.method, Params: q.params}
	}
	return true, qs
}

// taskChanged announces the status of the call's task, if it is one's.
func (c *Call) taskChanged() {
	if t := c.taskOf(); t != nil {
		t.changed()
	}
}

// relatedTask returns params with _meta["io.modelcontextprotocol/related-task"]
// naming the task id, as 2025-11-25 requires of a request about a task.
func relatedTask(params jsontext.Value, id string) jsontext.Value {
	var members map[string]jsontext.Value
	if json.Unmarshal(params, &members) != nil || members == nil {
		return params
	}
	var meta map[string]jsontext.Value
	if m, ok := members["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		meta = nil
	}
	if meta == nil {
		meta = map[string]jsontext.Value{}
	}
	meta["io.modelcontextprotocol/related-task"], _ = json.Marshal(map[string]string{"taskId": id})
	members["_meta"], _ = json.Marshal(meta, encodeOpts)
	b, err := json.Marshal(members, encodeOpts)
	if err != nil {
		return params
	}
	return b
}
