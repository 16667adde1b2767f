package protocol

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// The tasks/* methods and the task's shapes on the wire, in both
// generations: 2025-11-25 (tasks/get, tasks/result, tasks/list,
// tasks/cancel, notifications/tasks/status) and the 2026-07-28 extension
// (tasks/get with the result inlined, tasks/update, tasks/cancel,
// notifications/tasks on subscriptions/listen streams). A request finds
// only its owner's tasks: another's, like an unknown or expired one, is
// -32602.

// taskTime is how a task's timestamps are written: ISO 8601, UTC, to the
// millisecond.
func taskTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// legacyTaskView is a 2025-11-25 Task.
type legacyTaskView struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitzero"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

// legacyTask returns t in state st as 2025-11-25 shows it: a tool result
// with isError is failed there (2026-07-28 keeps completed for those, and
// failed for protocol errors).
func (t *task) legacyTask(st taskState) *legacyTaskView {
	status := st.status
	if status == taskCompleted && st.isError {
		status = taskFailed
	}
	return &legacyTaskView{TaskID: t.id, Status: status, StatusMessage: st.message, CreatedAt: taskTime(t.created),
		LastUpdatedAt: taskTime(st.updated), TTL: t.ttl.Milliseconds(), PollInterval: taskPollInterval.Milliseconds()}
}

// modernTaskView is a 2026-07-28 DetailedTask: a Task, and what its
// status holds.
type modernTaskView struct {
	TaskID         string                  `json:"taskId"`
	Status         string                  `json:"status"`
	StatusMessage  string                  `json:"statusMessage,omitzero"`
	CreatedAt      string                  `json:"createdAt"`
	LastUpdatedAt  string                  `json:"lastUpdatedAt"`
	TTLMs          int64                   `json:"ttlMs"`
	PollIntervalMs int64                   `json:"pollIntervalMs"`
	InputRequests  map[string]inputRequest `json:"inputRequests,omitzero"`
	Result         jsontext.Value          `json:"result,omitzero"`
	Error          *Error                  `json:"error,omitzero"`
}

// modernTask returns t in state st as 2026-07-28 shows it; detailed adds
// what its status holds (the questions, the result, the error).
func (t *task) modernTask(st taskState, detailed bool) modernTaskView {
	v := modernTaskView{TaskID: t.id, Status: st.status, StatusMessage: st.message, CreatedAt: taskTime(t.created),
		LastUpdatedAt: taskTime(st.updated), TTLMs: t.ttl.Milliseconds(), PollIntervalMs: taskPollInterval.Milliseconds()}
	if detailed {
		switch st.status {
		case taskInputRequired:
			v.InputRequests = st.requests
		case taskCompleted:
			// What the tools/call would have answered: a 2026-07-28 result
			// says its resultType.
			v.Result = append(jsontext.Value(`{"resultType":"complete"`), st.result[1:]...)
			if len(st.result) > len("{}") {
				v.Result = append(jsontext.Value(`{"resultType":"complete",`), st.result[1:]...)
			}
		case taskFailed:
			v.Error = st.failure
		}
	}
	return v
}

// createdTask is the result of a tools/call that created a task.
type createdTask struct {
	legacy *legacyTaskView
	modern modernTaskView
	told   func() // once the response is written or dropped
}

// encodeCreated encodes the CreateTaskResult of the tools/call id: in
// 2025-11-25 the task in "task", in 2026-07-28 the task itself, with
// resultType "task".
func (c *createdTask) encode(id jsontext.Value, tail resultTail) (Message, error) {
	if c.legacy != nil {
		b, err := encodeResult(id, &struct {
			Task *legacyTaskView `json:"task"`
		}{c.legacy})
		return msgOf(b, c.told), err
	}
	tail.ResultType = "task"
	b, err := encodeResult(id, &struct {
		modernTaskView
		taskTail
	}{c.modern, taskTailOf(tail)})
	return msgOf(b, c.told), err
}

// taskTail is what a result holding a task carries of the modern tail:
// its own ttlMs is the task's.
type taskTail struct {
	ResultType string      `json:"resultType,omitzero"`
	Meta       *resultMeta `json:"_meta,omitzero"`
}

func taskTailOf(t resultTail) taskTail { return taskTail{t.ResultType, t.Meta} }

// createdResult returns the result of the tools/call rq that created t.
func (t *task) createdResult(rq *request) *createdTask {
	st := t.state()
	if !rq.modern {
		return &createdTask{legacy: t.legacyTask(st), told: t.tell}
	}
	st.status = taskWorking // a CreateTaskResult holds no result, no questions
	return &createdTask{modern: t.modernTask(st, false), told: t.tell}
}

type taskIDParams struct {
	metaParams
	TaskID *string `json:"taskId"`
}

// tasksApply returns the error of a tasks/* request where tasks do not
// apply: in a legacy version before 2025-11-25, or in 2026-07-28 from a
// client that did not declare the extension.
func tasksApply(rq *request, method string, m *requestMeta) error {
	switch {
	case rq.modern:
		if !capsOf(m.ClientCapabilities).tasks() {
			return errNeedsTasksExtension(method)
		}
	case rq.version != Version20251125:
		return fmt.Errorf("%w: %s is not part of protocol %s (tasks came in %s)", ErrMethodNotFound, method, rq.version, Version20251125)
	}
	return nil
}

// findTask returns the task a tasks/* request names, its owner's; or the
// request's error: tasks do not apply (see tasksApply), or no such task
// is the owner's.
func (ss *Session) findTask(rq *request, method string, p *taskIDParams) (*task, error) {
	if err := tasksApply(rq, method, &p.Meta); err != nil {
		return nil, err
	}
	if p.TaskID == nil {
		return nil, fmt.Errorf(`%w: %s: "taskId" is required`, ErrInvalidParams, method)
	}
	t := ss.srv.tasks().get(*p.TaskID, ss.owner)
	if t == nil {
		return nil, errNoTask(method, *p.TaskID)
	}
	if !rq.modern {
		t.attachLegacy(ss, ss.out, 0) // its questions go to the session that asks about it
	}
	return t, nil
}

// taskResult is the result of tasks/get: the task as each generation
// shows it.
type taskResult struct {
	legacy  *legacyTaskView
	modern  modernTaskView
	written func() // once the response is written or dropped
	resultTail
}

func (r *taskResult) encodeMessage(id jsontext.Value) (Message, error) {
	var b []byte
	var err error
	switch {
	case r.legacy != nil:
		b, err = encodeResult(id, r.legacy)
	case r.modern.TaskID == "": // an acknowledgement
		b, err = encodeResult(id, &r.resultTail)
	default:
		b, err = encodeResult(id, &struct {
			modernTaskView
			taskTail
		}{r.modern, taskTailOf(r.resultTail)})
	}
	return msgOf(b, r.written), err
}

// getTask answers tasks/get: the task's status, and in 2026-07-28 what
// its status holds.
func (ss *Session) getTask(_ context.Context, rq *request, p *taskIDParams) (*taskResult, error) {
	t, err := ss.findTask(rq, "tasks/get", p)
	if err != nil {
		return nil, err
	}
	st := t.state()
	if !rq.modern {
		return &taskResult{legacy: t.legacyTask(st), written: t.know}, nil
	}
	return &taskResult{modern: t.modernTask(st, true)}, nil
}

// cancelTask answers tasks/cancel: in 2025-11-25 with the task, cancelled,
// or -32602 when it had ended; in 2026-07-28 with an acknowledgement, the
// same whatever its status.
func (ss *Session) cancelTask(_ context.Context, rq *request, p *taskIDParams) (*taskResult, error) {
	t, err := ss.findTask(rq, "tasks/cancel", p)
	if err != nil {
		return nil, err
	}
	cancelled := t.cancel()
	if rq.modern {
		return &taskResult{}, nil
	}
	st := t.state()
	if !cancelled {
		return nil, fmt.Errorf("%w: tasks/cancel: the task has ended already (%s)", ErrInvalidParams, t.legacyTask(st).Status)
	}
	return &taskResult{legacy: t.legacyTask(st)}, nil
}

type updateParams struct {
	taskIDParams
	InputResponses jsontext.Value `json:"inputResponses"`
}

// updateTask answers tasks/update (2026-07-28): the answers go to the
// task's questions that wait for them; answers to no question waiting,
// or of the wrong shape, are ignored (the question is asked again). It acknowledges at once: the task goes on meanwhile.
func (ss *Session) updateTask(_ context.Context, rq *request, p *updateParams) (*taskResult, error) {
	t, err := ss.findTask(rq, "tasks/update", &p.taskIDParams)
	if err != nil {
		return nil, err
	}
	if p.InputResponses == nil {
		return nil, fmt.Errorf(`%w: tasks/update: "inputResponses" is required`, ErrInvalidParams)
	}
	answers, err := decodeAnswers(p.InputResponses)
	if err != nil {
		return nil, err
	}
	t.call.deliver(answers)
	t.changed()
	return &taskResult{}, nil
}

// payloadResult is the result of tasks/result (2025-11-25): the call's
// result as it was kept, and _meta naming the task.
type payloadResult struct {
	result jsontext.Value
	id     string
	resultTail
}

func (r *payloadResult) encodeMessage(id jsontext.Value) (Message, error) {
	head, err := encodeResult(id, &struct{}{})
	if err != nil {
		return Message{}, err
	}
	// {"jsonrpc":…,"result":{}} around the result, less its closing
	// brace, and the _meta that names the task.
	head = head[:len(head)-len("{}}")]
	meta := `,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":` + strconv.Quote(r.id) + `}}}}`
	return Message{parts: []part{{b: head}, {b: r.result[:len(r.result)-1]}, {b: []byte(meta)}}}, nil
}

// taskPayload answers tasks/result (2025-11-25): once the task has ended,
// what its tools/call would have answered; meanwhile the request waits,
// and the task's questions go to the client on its stream.
func (ss *Session) taskPayload(ctx context.Context, rq *request, p *taskIDParams) (*payloadResult, error) {
	t, err := ss.findTask(rq, "tasks/result", p)
	if err != nil {
		return nil, err
	}
	t.attachLegacy(ss, rq.out, 1)
	defer t.attachLegacy(ss, ss.out, -1) // answered, or gone: the session's stream again
	t.know()
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, errShuttingDown
	}
	st := t.state()
	switch {
	case st.status == taskCompleted && st.result != nil:
		return &payloadResult{result: st.result, id: t.id}, nil
	case st.status == taskFailed:
		return nil, st.failure
	case st.status == taskCancelled:
		return nil, &Error{Code: CodeRequestCancelled, Message: "the task was cancelled: it has no result"}
	}
	return nil, errNoTask("tasks/result", t.id) // expired meanwhile
}

type listTasksParams struct {
	metaParams
	Cursor *string `json:"cursor"`
}

type listTasksResult struct {
	Tasks      []*legacyTaskView `json:"tasks"`
	NextCursor string            `json:"nextCursor,omitzero"`
	resultTail
}

// tasksPage is the most tasks one tasks/list result holds.
const tasksPage = 100

// listTasks answers tasks/list (2025-11-25): the owner's tasks, in the
// order they were created, a page at a time. A cursor is the creation
// number of the page's last task, opaque to clients.
func (ss *Session) listTasks(_ context.Context, rq *request, p *listTasksParams) (*listTasksResult, error) {
	if err := tasksApply(rq, "tasks/list", &p.Meta); err != nil {
		return nil, err
	}
	var after uint64
	if p.Cursor != nil {
		b, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		n, perr := strconv.ParseUint(string(b), 10, 64)
		if err != nil || perr != nil || n == 0 {
			return nil, fmt.Errorf("%w: tasks/list: the cursor is not one this server gave", ErrInvalidParams)
		}
		after = n
	}
	tasks, more := ss.srv.tasks().list(ss.owner, after, tasksPage)
	res := &listTasksResult{Tasks: make([]*legacyTaskView, 0, len(tasks))}
	for _, t := range tasks {
		res.Tasks = append(res.Tasks, t.legacyTask(t.state()))
	}
	if more {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatUint(tasks[len(tasks)-1].seq, 10)))
	}
	return res, nil
}
