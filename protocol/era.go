package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// listTTL is the ttlMs of modern list results: how long a client may
// cache them. Changes are announced on subscriptions/listen streams.
const listTTL = "60000"

// Metadata keys of the modern era.
const (
	metaServerInfo     = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// supportedVersions lists every version the server speaks, newest first,
// as server/discover and -32022 errors report them.
func supportedVersions() []string {
	vs := slices.Concat(ModernVersions, LegacyVersions)
	slices.Reverse(vs[len(ModernVersions):])
	slices.Reverse(vs[:len(ModernVersions)])
	return vs
}

// methods that exist only in the modern era, and legacy methods it removed.
var (
	modernOnlyMethods = []string{"server/discover", "subscriptions/listen"}
	removedInModern   = []string{"ping", "logging/setLevel", "initialize"}
)

// chooseEra decides the protocol version in force for a request, following
// the dual-era rules: a request whose _meta names a protocol version is
// served statelessly in that version (after checking _meta); initialize
// selects legacy semantics for the process; any other request is served
// in the legacy version negotiated by initialize (or the newest legacy
// version before it, so piping requests by hand works).
func (ss *session) chooseEra(req request, rc *reqContext) error {
	var requested *string
	if rc.p.Meta != nil {
		requested = rc.p.Meta.ProtocolVersion
	}
	if req.Method == "initialize" && (requested == nil || !isModernVersion(*requested)) {
		rc.version = ss.legacyVersion()
		return nil
	}
	if requested == nil || isLegacyVersion(*requested) {
		if slices.Contains(modernOnlyMethods, req.Method) {
			return fmt.Errorf(`%w: %s: _meta["io.modelcontextprotocol/protocolVersion"] is required (protocol %s)`, ErrInvalidParams, req.Method, ModernVersion)
		}
		rc.version = ss.legacyVersion()
		return nil
	}
	v := *requested
	if !isModernVersion(v) {
		data, _ := json.Marshal(struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{supportedVersions(), v})
		return &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version " + v, Data: data}
	}
	if len(rc.p.Meta.ClientCapabilities) == 0 || rc.p.Meta.ClientCapabilities[0] != '{' {
		return fmt.Errorf(`%w: %s: _meta["io.modelcontextprotocol/clientCapabilities"] is required and must be an object`, ErrInvalidParams, req.Method)
	}
	if slices.Contains(removedInModern, req.Method) {
		return fmt.Errorf("%w: %s is not part of protocol %s", ErrMethodNotFound, req.Method, v)
	}
	if rc.p.Meta.LogLevel != nil {
		l, err := ParseLogLevel(*rc.p.Meta.LogLevel)
		if err != nil {
			return err
		}
		rc.logLevel = l
		rc.logEnabled = true
	}
	rc.version = v
	rc.modern = true
	ss.modernSeen.Store(true)
	return nil
}

// appendModernTail appends what every modern result carries: resultType
// and the server's identity in _meta.
func (ss *session) appendModernTail(buf []byte, rc *reqContext) []byte {
	if !rc.modern {
		return buf
	}
	buf = append(buf, `,"resultType":"complete","_meta":{"`+metaServerInfo+`":`...)
	buf = ss.srv.Info.appendJSON(buf, rc.shape)
	return append(buf, '}')
}

// appendModernList appends what a modern list result carries.
func (ss *session) appendModernList(buf []byte, rc *reqContext) []byte {
	if !rc.modern {
		return buf
	}
	buf = append(buf, `,"ttlMs":`+listTTL+`,"cacheScope":"private"`...)
	return ss.appendModernTail(buf, rc)
}

// discover answers server/discover.
func (ss *session) discover(rc *reqContext) ([]byte, error) {
	buf := []byte(`{"supportedVersions":[`)
	for i, v := range supportedVersions() {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, v)
	}
	buf = append(buf, `],"capabilities":`...)
	buf = ss.appendCapabilities(buf)
	if ss.srv.Instructions != "" {
		buf = append(buf, `,"instructions":`...)
		buf = appendString(buf, ss.srv.Instructions)
	}
	buf = append(buf, `,"ttlMs":`+listTTL+`,"cacheScope":"private"`...)
	buf = ss.appendModernTail(buf, rc)
	return append(buf, '}'), nil
}

// subscriptionFilter is the notifications member of subscriptions/listen.
type subscriptionFilter struct {
	ToolsListChanged     bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged   bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubs         []string `json:"resourceSubscriptions,omitempty"`
}

// subscription is one open subscriptions/listen stream.
type subscription struct {
	id    ID
	tools bool          // the client asked for tools list_changed, and the server sends it
	done  chan struct{} // closed by closeAll: the server ends the stream gracefully

	// The acknowledgement must be the subscription's first message, and
	// a change that happens before it is sent must not be lost: until
	// acked, a change only sets pending, and listen sends it after the
	// acknowledgement. No lock is held while a message is sent, so a
	// client that stops reading cannot block shutdown.
	mu      sync.Mutex
	acked   bool
	pending bool
}

// changed sends list_changed on the subscription, or remembers it for
// after the acknowledgement.
func (sub *subscription) changed(ss *session) {
	sub.mu.Lock()
	if !sub.acked {
		sub.pending = true
		sub.mu.Unlock()
		return
	}
	sub.mu.Unlock()
	p := []byte(`{"_meta":{"` + metaSubscriptionID + `":`)
	p = append(p, sub.id...)
	p = append(p, "}}"...)
	ss.send(appendNotification(nil, "notifications/tools/list_changed", p))
}

// subscriptions holds the open subscriptions/listen streams of a session.
type subscriptions struct {
	mu     sync.Mutex
	open   map[*subscription]struct{}
	closed bool
}

// add registers sub; it reports false when the session is closing.
func (s *subscriptions) add(sub *subscription) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.open == nil {
		s.open = map[*subscription]struct{}{}
	}
	s.open[sub] = struct{}{}
	return true
}

func (s *subscriptions) remove(sub *subscription) {
	s.mu.Lock()
	delete(s.open, sub)
	s.mu.Unlock()
}

// list returns the open subscriptions.
func (s *subscriptions) list() []*subscription {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*subscription, 0, len(s.open))
	for sub := range s.open {
		out = append(out, sub)
	}
	return out
}

// closeAll ends every stream (the server is shutting down) and refuses new ones.
func (s *subscriptions) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for sub := range s.open {
		close(sub.done)
	}
}

// listen serves subscriptions/listen: it acknowledges the notification
// types it will send, keeps the stream open, and answers only when the
// server shuts down (a client ends it with notifications/cancelled, which
// gets no answer).
func (ss *session) listen(ctx context.Context, rc *reqContext, req request) ([]byte, error) {
	if rc.p.Notifications == nil {
		return nil, fmt.Errorf(`%w: subscriptions/listen: "notifications" is required`, ErrInvalidParams)
	}
	sub := &subscription{id: req.ID, tools: rc.p.Notifications.ToolsListChanged && ss.srv.ListChanged, done: make(chan struct{})}
	ack := []byte(`{"notifications":{`)
	if sub.tools {
		ack = append(ack, `"toolsListChanged":true`...)
	}
	ack = append(ack, `},"_meta":{"`+metaSubscriptionID+`":`...)
	ack = append(ack, req.ID...)
	ack = append(ack, `}}`...)
	added := ss.subs.add(sub)
	ss.send(appendNotification(nil, "notifications/subscriptions/acknowledged", ack))
	if !added {
		// The server is shutting down: acknowledged, and ended at once.
		return ss.listenResult(rc, req), nil
	}
	sub.mu.Lock()
	sub.acked = true
	missed := sub.pending
	sub.mu.Unlock()
	if missed {
		sub.changed(ss)
	}
	defer ss.subs.remove(sub)
	select {
	case <-ctx.Done():
	case <-sub.done:
	}
	return ss.listenResult(rc, req), nil
}

func (ss *session) listenResult(rc *reqContext, req request) []byte {
	buf := []byte(`{"resultType":"complete","_meta":{"` + metaSubscriptionID + `":`)
	buf = append(buf, req.ID...)
	buf = append(buf, `,"`+metaServerInfo+`":`...)
	buf = ss.srv.Info.appendJSON(buf, rc.shape)
	return append(buf, "}}"...)
}

// notifyToolsChanged tells this session's client that the tool list
// changed: as a legacy notification when it initialized, and on each
// subscriptions/listen stream that asked for it.
func (ss *session) notifyToolsChanged() {
	if !ss.srv.ListChanged {
		return
	}
	if ss.version.Load() != nil {
		ss.send(appendNotification(nil, "notifications/tools/list_changed", nil))
	}
	for _, sub := range ss.subs.list() {
		if sub.tools {
			sub.changed(ss)
		}
	}
}
