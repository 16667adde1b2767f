package protocol

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

type listenParams struct {
	metaParams
	Notifications *subscriptionFilter `json:"notifications"`
}

// subscriptionFilter is the notifications member of subscriptions/listen
// and of its acknowledgement.
type subscriptionFilter struct {
	// The others (prompts, resources) are ignored: the bridge never
	// sends them.
	ToolsListChanged bool `json:"toolsListChanged,omitzero"`
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
func (ss *session) listen(ctx context.Context, rq *request, p *listenParams) (*emptyResult, error) {
	if p.Notifications == nil {
		return nil, fmt.Errorf(`%w: subscriptions/listen: "notifications" is required`, ErrInvalidParams)
	}
	c := callOf(ctx)
	// Acknowledged and registered at once: a change is announced on the
	// stream after its acknowledgement, never before.
	ss.mu.Lock()
	c.toolsChanged = p.Notifications.ToolsListChanged && ss.srv.ListChanged
	ss.sendAlways(rq.out, encodeNotification("notifications/subscriptions/acknowledged", &ackParams{
		Notifications: subscriptionFilter{ToolsListChanged: c.toolsChanged},
		Meta:          subscriptionMeta{rq.id},
	}), nil)
	ss.mu.Unlock()
	<-ctx.Done() // the client cancelled it, or the session stopped
	return &emptyResult{resultTail{Meta: &resultMeta{SubscriptionID: rq.id}}}, nil
}

// notifyToolsChanged tells this session's client that the tool list
// changed: as a legacy notification when it initialized, and on each
// subscriptions/listen stream that asked for it.
func (ss *session) notifyToolsChanged() {
	if !ss.srv.ListChanged {
		return
	}
	if ss.version.Load() != nil {
		ss.sendAlways(ss.out, encodeNotification("notifications/tools/list_changed", nil), &ss.toolsChangedQueued)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.inflight {
		if c.toolsChanged {
			ss.sendAlways(c.rq.out, encodeNotification("notifications/tools/list_changed", &listChangedParams{Meta: subscriptionMeta{c.rq.id}}), &c.notifyQueued)
		}
	}
}
