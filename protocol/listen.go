package protocol

import (
	"context"
	"fmt"
	"math/bits"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

type listenParams struct {
	metaParams
	Notifications *subscriptionFilter `json:"notifications"`
}

// subscriptionFilter is the notifications member of subscriptions/listen
// and of its acknowledgement. Resource subscriptions (resourceSubscriptions)
// are not served: the bridge cannot know when a backend's data changes.
type subscriptionFilter struct {
	ToolsListChanged     bool `json:"toolsListChanged,omitzero"`
	PromptsListChanged   bool `json:"promptsListChanged,omitzero"`
	ResourcesListChanged bool `json:"resourcesListChanged,omitzero"`
	// TaskIDs are the tasks whose status changes the stream announces
	// (notifications/tasks): the tasks extension's.
	TaskIDs []string `json:"taskIds,omitzero"`
}

// listKind is a set of lists whose changes are announced.
type listKind uint8

const (
	toolsList listKind = 1 << iota
	promptsList
	resourcesList
	numLists = iota
)

// index returns the place of one list in arrays of per-list state.
func (k listKind) index() int { return bits.TrailingZeros8(uint8(k)) }

// listChangedMethods name the notification that announces each list's changes.
var listChangedMethods = map[listKind]string{
	toolsList:     "notifications/tools/list_changed",
	promptsList:   "notifications/prompts/list_changed",
	resourcesList: "notifications/resources/list_changed",
}

// kinds returns the lists the filter asks about.
func (f subscriptionFilter) kinds() listKind {
	var k listKind
	if f.ToolsListChanged {
		k |= toolsList
	}
	if f.PromptsListChanged {
		k |= promptsList
	}
	if f.ResourcesListChanged {
		k |= resourcesList
	}
	return k
}

func filterOf(k listKind) subscriptionFilter {
	return subscriptionFilter{ToolsListChanged: k&toolsList != 0, PromptsListChanged: k&promptsList != 0, ResourcesListChanged: k&resourcesList != 0}
}

// announces reports whether the server declares that it announces
// changes of the list k.
func (s *Server) announces(k listKind) bool {
	switch k {
	case toolsList:
		return s.ListChanged
	case promptsList:
		return s.PromptsListChanged && s.Prompts != nil
	case resourcesList:
		return s.ResourcesListChanged && s.Resources != nil
	}
	return false
}

// announced returns the lists of k whose changes the server announces.
func (s *Server) announced(k listKind) listKind {
	var out listKind
	for _, one := range []listKind{toolsList, promptsList, resourcesList} {
		if k&one != 0 && s.announces(one) {
			out |= one
		}
	}
	return out
}

// subscriptionMeta is the _meta of a stream's notifications.
type subscriptionMeta struct {
	SubscriptionID jsontext.Value `json:"io.modelcontextprotocol/subscriptionId"`
}

type ackParams struct {
	Notifications subscriptionFilter `json:"notifications"`
	Meta          subscriptionMeta   `json:"_meta"`
}

type listChangedParams struct {
	Meta subscriptionMeta `json:"_meta"`
}

// listen serves subscriptions/listen: it acknowledges the notification
// types it will send (only those the server supports), keeps the stream
// open, and answers when the session ends. A client ends a stream with
// notifications/cancelled, which gets no answer.
func (ss *Session) listen(ctx context.Context, rq *request, p *listenParams) (*emptyResult, error) {
	if p.Notifications == nil {
		return nil, fmt.Errorf(`%w: subscriptions/listen: "notifications" is required`, ErrInvalidParams)
	}
	c := rq.flight
	var taskIDs []string
	if len(p.Notifications.TaskIDs) > 0 {
		if !capsOf(p.Meta.ClientCapabilities).tasks() {
			return nil, errNeedsTasksExtension("notifications of tasks")
		}
		// Only the owner's tasks, and no word of the others: a stream
		// tells nobody which tasks exist.
		for _, id := range p.Notifications.TaskIDs[:min(len(p.Notifications.TaskIDs), maxTaskIDs)] {
			if ss.srv.tasks().get(id, ss.owner) != nil {
				taskIDs = append(taskIDs, id)
			}
		}
	}
	// Acknowledged and registered at once: a change is announced on the
	// stream after its acknowledgement, never before.
	ss.mu.Lock()
	c.lists = ss.srv.announced(p.Notifications.kinds())
	c.taskIDs = taskIDs
	filter := filterOf(c.lists)
	filter.TaskIDs = taskIDs
	ss.sendAlways(rq.out, encodeNotification("notifications/subscriptions/acknowledged", &ackParams{
		Notifications: filter,
		Meta:          subscriptionMeta{rq.id},
	}), nil)
	ss.mu.Unlock()
	<-ctx.Done() // the client cancelled it, or the session stopped
	return &emptyResult{resultTail{Meta: &resultMeta{SubscriptionID: rq.id}}}, nil
}

// notifyListChanged tells this session's client that the list k
// changed: as a legacy notification when it initialized, and on each
// subscriptions/listen stream that asked for it. The server announces k.
func (ss *Session) notifyListChanged(k listKind) {
	method := listChangedMethods[k]
	if ss.version.Load() != nil {
		ss.sendAlways(ss.out, encodeNotification(method, nil), &ss.listsQueued[k.index()])
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.inflight {
		if c.lists&k != 0 {
			ss.sendAlways(c.call.at.rq.out, encodeNotification(method, &listChangedParams{Meta: subscriptionMeta{c.call.at.rq.id}}), &c.listsQueued[k.index()])
		}
	}
}

// maxTaskIDs bounds the tasks one listen stream follows.
const maxTaskIDs = DefaultMaxTasksPerOwner

// taskNotificationParams are the params of notifications/tasks: the task
// as tasks/get shows it, and the stream's subscription.
type taskNotificationParams struct {
	modernTaskView
	Meta subscriptionMeta `json:"_meta"`
}

// notifyTask announces t's status, st, on every subscriptions/listen
// stream that follows it. A stream whose client reads too slowly misses
// it: tasks/get says the same.
func (s *Server) notifyTask(t *task, st taskState) {
	var view *modernTaskView
	for _, ss := range s.liveSessions() {
		ss.mu.Lock()
		for _, c := range ss.inflight {
			if !slices.Contains(c.taskIDs, t.id) {
				continue
			}
			if view == nil {
				v := t.modernTask(st, true)
				view = &v
			}
			ss.notify(c.call.at.rq.out, encodeNotification("notifications/tasks", &taskNotificationParams{*view, subscriptionMeta{c.call.at.rq.id}}), nil)
		}
		ss.mu.Unlock()
	}
}
