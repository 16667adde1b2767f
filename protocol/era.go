package protocol

import (
	"context"
	"fmt"
	"sync"
)

// listTTL is the ttlMs of modern list results: how long a client may cache them.
const listTTL = "60000"

// chooseEra sets the protocol version in force for a request.
func (ss *session) chooseEra(req request, rc *reqContext) error {
	rc.version = ss.legacyVersion()
	return nil
}

func (ss *session) discover(rc *reqContext) ([]byte, error) {
	return nil, fmt.Errorf("%w: server/discover", ErrMethodNotFound)
}

// subscriptionFilter is the notifications member of subscriptions/listen.
type subscriptionFilter struct {
	ToolsListChanged bool `json:"toolsListChanged"`
}

// subscriptions holds the open subscriptions/listen streams of a session.
type subscriptions struct {
	mu sync.Mutex
}

func (s *subscriptions) closeAll() {}

func (ss *session) listen(ctx context.Context, rc *reqContext, req request) ([]byte, error) {
	return nil, fmt.Errorf("%w: subscriptions/listen", ErrMethodNotFound)
}

func (ss *session) notifyToolsChanged() {
	if !ss.srv.ListChanged || ss.version.Load() == nil {
		return
	}
	ss.send(appendNotification(nil, "notifications/tools/list_changed", nil))
}
