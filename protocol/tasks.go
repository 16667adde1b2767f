package protocol

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// Tasks are calls that outlive their request: the server answers a
// tools/call with a handle at once, and the client asks for the call's
// status and result later, from another request, connection or session.
// MCP has them in two generations: 2025-11-25's core tasks (the request's
// params.task, tasks/get, tasks/result, tasks/list, tasks/cancel) and
// 2026-07-28's io.modelcontextprotocol/tasks extension (resultType
// "task", tasks/get with the result inlined, tasks/update, tasks/cancel).
// Both are served from one store, of the server's, here.
//
// A task is a parked call (parked.go) whose result goes to the store: its
// provider runs on a goroutine of the server's, its Call detached from any
// request, counting what it reads against the server's budget. The store
// keeps the task, its status and, once it ends, its result as encoded
// bytes, counted against the same budget, for the task's time to live.
// Each task belongs to its owner (the Call's Owner): only requests of the
// same owner see it. Everything is bounded: the tasks kept, in all and per
// owner, their time to live, the bytes of the results kept, and each
// task's backend call (the provider's task timeout).

// Defaults for the zero values of Server's limits of tasks.
const (
	DefaultMaxTasks         = 4096
	DefaultMaxTasksPerOwner = 256
	DefaultMaxTaskTTL       = 2 * time.Hour
	DefaultMaxTaskBytes     = 16 << 20
	DefaultTaskAfter        = time.Second
)

// taskPollInterval is the pollInterval suggested to clients.
const taskPollInterval = 500 * time.Millisecond

// The statuses of a task, as both generations name them.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
	// taskExpired is how a task that reached its time to live before it
	// ended is recorded; it is then gone, and never shown to a client.
	taskExpired = "expired"
)

// TaskEvent is a task's creation or its end, as Server.TaskRecorded is
// told of it.
type TaskEvent struct {
	// Call is the task's call: who it is for, its client, its version.
	Call *Call
	// ID is the task's id; Tool the tool called.
	ID, Tool string
	// Ended is false when the task was created, true when it ended.
	Ended bool
	// Status is how it ended: completed, failed, cancelled, or expired
	// (its time to live ran out first); "" at its creation.
	Status string
	// Duration is how long the task lived, from its creation to its end.
	Duration time.Duration
}

// errTooManyTasks is the store's refusal of one task too many: -32603
// with data.retryAfterMs, the time until the first of the tasks it counts
// expires.
func errTooManyTasks(whose string, limit int, retry time.Duration) *Error {
	data, _ := json.Marshal(map[string]int64{"retryAfterMs": max(retry.Milliseconds(), 1000)}, encodeOpts)
	return &Error{Code: CodeInternalError, Data: data,
		Message: fmt.Sprintf("too many tasks: %s already keeps %d; try again later, or fetch or cancel some first", whose, limit)}
}

// errNoTask answers a request about a task the store does not have for
// its owner: unknown, expired, or another owner's, which the client must
// not tell apart.
func errNoTask(method, id string) error {
	return fmt.Errorf("%w: %s: no task %q: it is unknown, or it expired", ErrInvalidParams, method, id)
}

// taskStore keeps a server's tasks. Its methods are safe for concurrent
// use. Lock order: the store's mu, then a task's, then its Call's.
type taskStore struct {
	srv                 *Server
	maxAll, maxPerOwner int
	maxTTL              time.Duration
	maxBytes            int64

	mu      sync.Mutex
	byID    map[string]*task
	owned   map[Principal]int // tasks kept per owner, those being created included
	live    int               // tasks kept in all, those being created included
	bytes   int64             // bytes of results kept
	seq     uint64            // the last task's creation number
	expired int64             // tasks that reached their time to live
	dropped int64             // the bytes of results dropped with them
}

func newTaskStore(s *Server) *taskStore {
	total := int64(orDefault(s.MaxTotalHeldBytes, orDefault(s.MaxHeldBytes, DefaultMaxHeldBytes)))
	return &taskStore{
		srv:         s,
		maxAll:      orDefault(s.MaxTasks, DefaultMaxTasks),
		maxPerOwner: orDefault(s.MaxTasksPerOwner, DefaultMaxTasksPerOwner),
		maxTTL:      orDefault(s.MaxTaskTTL, DefaultMaxTaskTTL),
		// Results kept never take more than half the budget: requests
		// must still be read and answered while a store is full.
		maxBytes: min(int64(orDefault(s.MaxTaskBytes, DefaultMaxTaskBytes)), total/2),
		byID:     map[string]*task{},
		owned:    map[Principal]int{},
	}
}

// task is one task of the store.
type task struct {
	store   *taskStore
	id      string
	seq     uint64 // its creation number, which orders tasks/list
	owner   Principal
	tool    string
	ttl     time.Duration
	created time.Time
	expiry  *time.Timer // ends it at created + ttl

	// Set when the task is created, before anyone else sees it.
	call *Call
	pk   *parked

	mu          sync.Mutex     // guards what follows
	updated     time.Time      // its last change of status or message
	message     string         // its statusMessage: the call's latest progress, or why it ended
	status      string         // working until it ends; input_required is read from its call
	result      jsontext.Value // a completed task's CallToolResult, encoded
	isError     bool           // that result is a tool's error
	failure     *Error         // a failed task's error
	kept        *hold          // the result's bytes, counted against the server's budget
	done        chan struct{}  // closed when it ends
	notified    string         // the status last announced
	quiet       bool           // ended before its creation was answered: nothing to announce
	told        chan struct{}  // closed once the response that created it is written (or dropped)
	tellOnce    sync.Once
	known       chan struct{} // closed once its owner asked about it (see know)
	knowOnce    sync.Once
	legacy      *Session // a 2025-11-25 task: the session its questions and notifications go to
	resultWaits int      // tasks/result requests waiting for it, whose streams its questions go to
}

// tasks returns the server's task store.
func (s *Server) tasks() *taskStore {
	s.total() // the budget first: the store reads its limit
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taskStore == nil {
		s.taskStore = newTaskStore(s)
	}
	return s.taskStore
}

// reserve counts a task of owner for the tool, which its request may
// create: within the limits, it returns the task, not yet seen by
// anyone, which publish makes known or unreserve forgets; else
// errTooManyTasks.
func (ts *taskStore) reserve(owner Principal, tool string, ttl time.Duration) (*task, error) {
	if ttl <= 0 || ttl > ts.maxTTL {
		ttl = ts.maxTTL
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := time.Now()
	switch {
	case ts.live >= ts.maxAll:
		return nil, errTooManyTasks("the server", ts.maxAll, ts.firstExpiry(now, nil))
	case ts.owned[owner] >= ts.maxPerOwner:
		return nil, errTooManyTasks("this client", ts.maxPerOwner, ts.firstExpiry(now, &owner))
	}
	ts.live++
	ts.owned[owner]++
	return &task{store: ts, owner: owner, tool: tool, ttl: ttl, status: taskWorking, done: make(chan struct{}), told: make(chan struct{}), known: make(chan struct{})}, nil
}

// newID returns a new task id: 128 random bits, which cannot be guessed.
func (ts *taskStore) newID() string {
	if ts.srv.taskID != nil {
		return ts.srv.taskID()
	}
	var id [16]byte
	rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// firstExpiry returns the time until the first task of owner (of anyone,
// for nil) reaches its time to live; ts.mu is held.
func (ts *taskStore) firstExpiry(now time.Time, owner *Principal) time.Duration {
	first := ts.maxTTL
	for _, t := range ts.byID {
		if owner == nil || t.owner == *owner {
			first = min(first, t.created.Add(t.ttl).Sub(now))
		}
	}
	return first
}

// unreserve forgets a task reserved that was not created.
func (ts *taskStore) unreserve(t *task) {
	ts.mu.Lock()
	ts.forget(t)
	ts.mu.Unlock()
}

// forget uncounts t; ts.mu is held.
func (ts *taskStore) forget(t *task) {
	ts.live--
	if ts.owned[t.owner]--; ts.owned[t.owner] <= 0 {
		delete(ts.owned, t.owner)
	}
}

// publish makes t known, working, from now until its time to live: a
// request for it from its owner finds it.
func (ts *taskStore) publish(t *task) {
	now := time.Now()
	t.id, t.created, t.updated = ts.newID(), now, now
	ts.mu.Lock()
	ts.seq++
	t.seq = ts.seq
	ts.byID[t.id] = t
	// The timer's function runs on a goroutine of its own, and ends.
	t.expiry = time.AfterFunc(t.ttl, func() { ts.expire(t) })
	ts.mu.Unlock()
	ts.record(TaskEvent{Call: t.call, ID: t.id, Tool: t.tool})
}

// get returns the task id of owner, or nil: none is known by that id, it
// expired, or it is another owner's.
func (ts *taskStore) get(id string, owner Principal) *task {
	ts.mu.Lock()
	t := ts.byID[id]
	ts.mu.Unlock()
	if t == nil || t.owner != owner {
		return nil
	}
	if time.Since(t.created) >= t.ttl {
		ts.expire(t) // its timer is late: not found all the same
		return nil
	}
	return t
}

// list returns owner's tasks created after the creation number after, in
// the order they were created, at most n, and whether more follow.
func (ts *taskStore) list(owner Principal, after uint64, n int) ([]*task, bool) {
	ts.mu.Lock()
	var mine []*task
	for _, t := range ts.byID {
		if t.owner == owner && t.seq > after && time.Since(t.created) < t.ttl {
			mine = append(mine, t)
		}
	}
	ts.mu.Unlock()
	sort.Slice(mine, func(i, j int) bool { return mine[i].seq < mine[j].seq })
	if len(mine) > n {
		return mine[:n], true
	}
	return mine, false
}

// expire ends t at its time to live: it is forgotten, its result's bytes
// released, and its call cancelled if it is still running. Expiring
// twice is harmless.
func (ts *taskStore) expire(t *task) {
	ts.mu.Lock()
	if ts.byID[t.id] != t {
		ts.mu.Unlock()
		return
	}
	delete(ts.byID, t.id)
	ts.forget(t)
	t.expiry.Stop()
	ts.expired++
	t.mu.Lock()
	kept := t.kept
	t.kept = nil
	if kept != nil {
		n := int64(len(t.result))
		ts.bytes -= n
		ts.dropped += n
	}
	t.result = nil // nobody may fetch it now: the bytes go with it
	t.mu.Unlock()
	ts.mu.Unlock()
	kept.finish()
	if t.end(taskExpired, nil, nil, "") {
		t.pk.cancel() // its call ends, and its result, if any, is not kept
	}
}

// stats returns the tasks kept, the bytes of their results, and how many
// tasks expired and with how many bytes.
func (ts *taskStore) stats() (live int, bytes, expired, dropped int64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.byID), ts.bytes, ts.expired, ts.dropped
}

// record tells Server.TaskRecorded of ev.
func (ts *taskStore) record(ev TaskEvent) {
	if f := ts.srv.TaskRecorded; f != nil {
		f(ev)
	}
}

// end ends t with status, once: the first end decided wins, and every
// later one returns false. A result or failure comes with its status;
// message is its statusMessage ("" to keep the last).
func (t *task) end(status string, result jsontext.Value, failure *Error, message string) bool {
	t.mu.Lock()
	if t.status != taskWorking {
		t.mu.Unlock()
		return false
	}
	t.status, t.failure, t.updated = status, failure, time.Now()
	if result != nil {
		t.result = result
	}
	if message != "" {
		t.message = message
	}
	t.mu.Unlock()
	if t.call != nil { // reserved and dropped before it was created: no record
		t.store.record(TaskEvent{Call: t.call, ID: t.id, Tool: t.tool, Ended: true, Status: status, Duration: time.Since(t.created)})
		t.changed()
	}
	close(t.done) // recorded and announced before whoever waits is answered
	return true
}

// cancel cancels t, as tasks/cancel asks: it ends cancelled, and its
// call's context is cancelled, as a cancelled call's is. It reports false
// when t had ended already.
func (t *task) cancel() bool {
	if !t.end(taskCancelled, nil, nil, "The task was cancelled by request.") {
		return false
	}
	t.pk.cancel()
	return true
}

// finish ends t with what its call returned, unless it ended first
// (cancelled, expired). The result is kept, encoded, within the store's
// bytes; a result that does not fit fails the task. The bytes the call
// read are released once its result is counted, or dropped.
func (t *task) finish(res any, err error) {
	defer t.pk.hold.finish()
	ts := t.store
	switch r, _ := res.(*CallToolResult); {
	case err == nil && r != nil && t.call.pending() != nil:
		t.end(taskFailed, nil, &Error{Code: CodeInternalError, Message: "the call asked to confirm once it was a task; call the tool again"}, "")
	case err != nil:
		we := WireError(err)
		t.end(taskFailed, nil, we, we.Message)
	case r == nil:
		t.end(taskFailed, nil, ErrInternal, "")
	default:
		b, err := json.Marshal(r, encodeOpts)
		if err != nil {
			t.end(taskFailed, nil, &Error{Code: CodeInternalError, Message: "encoding the result: " + err.Error()}, "")
			return
		}
		ts.mu.Lock()
		if free := ts.maxBytes - ts.bytes; int64(len(b)) > free {
			ts.mu.Unlock()
			data, _ := json.Marshal(map[string]int64{"size": int64(len(b)), "free": max(free, 0), "limit": ts.maxBytes}, encodeOpts)
			t.end(taskFailed, nil, &Error{Code: CodeInternalError, Data: data, Message: fmt.Sprintf(
				"the task's result, of %d bytes, does not fit in the room kept for the results of tasks (%d bytes free of %d); call the tool again, or fetch the results of other tasks first",
				len(b), max(free, 0), ts.maxBytes)}, "")
			return
		}
		ts.bytes += int64(len(b))
		ts.mu.Unlock()
		kept := ts.srv.total().newHold()
		kept.charge(len(b)) // before the call's hold is released: never uncounted
		t.mu.Lock()
		t.kept = kept
		t.mu.Unlock()
		message := ""
		if r.IsError {
			message = errorText(r)
			t.mu.Lock()
			t.isError = true
			t.mu.Unlock()
		}
		if !t.end(taskCompleted, b, nil, message) {
			t.unkeep(kept, len(b)) // ended first: cancelled, or expired
		}
	}
}

// unkeep releases a result's bytes that were counted for t, which ended
// otherwise meanwhile.
func (t *task) unkeep(kept *hold, n int) {
	t.store.mu.Lock()
	t.mu.Lock()
	if t.kept == kept {
		t.kept = nil
		t.store.bytes -= int64(n)
	}
	t.mu.Unlock()
	t.store.mu.Unlock()
	kept.finish()
}

// errorText is the first text of a tool's error result, short, for a
// task's statusMessage.
func errorText(r *CallToolResult) string {
	for _, c := range r.Content {
		if s := c.String(); s != "" {
			return safetext.Cut(s, maxStatusMessage)
		}
	}
	return "the tool returned an error"
}

// maxStatusMessage bounds the bytes of a statusMessage taken from a
// call's progress or error.
const maxStatusMessage = 1 << 10

// progress records the call's latest progress as t's statusMessage.
func (t *task) progress(value, total float64, message string) {
	if message == "" {
		message = fmt.Sprintf("%g", value)
		if total > 0 {
			message += fmt.Sprintf(" of %g", total)
		}
	}
	t.mu.Lock()
	if t.status == taskWorking {
		t.message, t.updated = safetext.Cut(message, maxStatusMessage), time.Now()
	}
	t.mu.Unlock()
}

// state is what a client is told of a task at one moment.
type taskState struct {
	status   string
	isError  bool
	message  string
	updated  time.Time
	result   jsontext.Value
	failure  *Error
	requests map[string]inputRequest // 2026-07-28: the questions waiting for answers
}

// state returns t's state now: its status, input_required while its call
// waits for the client's answers.
func (t *task) state() taskState {
	t.mu.Lock()
	st := taskState{status: t.status, isError: t.isError, message: t.message, updated: t.updated, result: t.result, failure: t.failure}
	t.mu.Unlock()
	if st.status == taskWorking {
		if asking, qs := t.call.waiting(); asking {
			st.status, st.requests = taskInputRequired, qs
		}
	}
	return st
}

// changed announces t's status to whoever listens, when it changed since
// it was last announced.
func (t *task) changed() {
	st := t.state()
	t.mu.Lock()
	same := st.status == t.notified || t.quiet
	t.notified = st.status
	if !same && (st.status == taskWorking || st.status == taskInputRequired) {
		t.updated = time.Now() // an end says when it came itself
		st.updated = t.updated
	}
	legacy := t.legacy
	t.mu.Unlock()
	if same {
		return
	}
	if legacy != nil && t.isTold() {
		legacy.notify(legacy.out, encodeNotification("notifications/tasks/status", t.legacyTask(st)), nil)
	}
	t.store.srv.notifyTask(t, st)
}

// tell records that the response that created t is written, or dropped:
// the client knows the task from then on.
func (t *task) tell() { t.tellOnce.Do(func() { close(t.told) }) }

// know records that the owner's client knows t: it has read the answer
// to a tasks/get (know runs once that response is written or dropped),
// or it waits on tasks/result. A 2025-11-25 question about t goes out
// on one stream only then, after what told the client of t.
func (t *task) know() { t.knowOnce.Do(func() { close(t.known) }) }

func (t *task) isTold() bool {
	select {
	case <-t.told:
		return true
	default:
		return false
	}
}

// TaskInfo describes one task as the owner's console shows it: a copy,
// made by Server.LiveTasks.
type TaskInfo struct {
	// ID is the task's id; Tool the tool called.
	ID, Tool string
	// Owner is who owns the task (only its requests see it); Client what
	// the client that created it calls itself.
	Owner  Principal
	Client ClientInfo
	// Status is working, input_required (its call waits for the client's
	// answers), completed, failed or cancelled; IsError says that a
	// completed task's result is a tool's error.
	Status  string
	IsError bool
	// Message is its statusMessage (the call's latest progress, or why it
	// ended), or a failed task's error when it has none; "" when there is
	// neither.
	Message string
	// Created is when it was created; Updated its last change of status
	// or message; Expires when it reaches its time to live, and is
	// forgotten with its result.
	Created, Updated, Expires time.Time
}

// LiveTasks returns the tasks the server keeps now, of every owner, the
// oldest first: those working or waiting for answers, and those that
// ended (completed, failed, cancelled) until they expire. They are
// copies, as many as the store keeps (MaxTasks at most), read for the
// owner's console; it is safe for concurrent use, and a server that made
// no task yet makes no store for it.
func (s *Server) LiveTasks() []TaskInfo {
	s.mu.Lock()
	ts := s.taskStore
	s.mu.Unlock()
	if ts == nil {
		return nil
	}
	now := time.Now()
	ts.mu.Lock()
	kept := make([]*task, 0, len(ts.byID))
	for _, t := range ts.byID {
		if now.Sub(t.created) < t.ttl { // else its timer is late: expired all the same
			kept = append(kept, t)
		}
	}
	ts.mu.Unlock()
	sort.Slice(kept, func(i, j int) bool { return kept[i].seq < kept[j].seq })
	out := make([]TaskInfo, len(kept))
	for i, t := range kept {
		// Set before the task was published, and never after.
		out[i] = TaskInfo{ID: t.id, Tool: t.tool, Owner: t.owner, Client: t.call.Client(), Created: t.created, Expires: t.created.Add(t.ttl)}
		st := t.state() // t.mu, then its call's: the store's is not held
		out[i].Status, out[i].Message, out[i].Updated = st.status, st.message, st.updated
		// A call that returns a tool's error after its task was cancelled
		// marks it too: only a completed task's counts.
		out[i].IsError = st.isError && st.status == taskCompleted
		if st.message == "" && st.failure != nil {
			out[i].Message = st.failure.Message
		}
	}
	return out
}
