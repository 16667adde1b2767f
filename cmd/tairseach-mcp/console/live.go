package console

import (
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// What the console keeps of the calls it is told of, each bounded: the
// calls in flight, a ring of the last ones ended, counts by client, and
// the subscribers of its event stream, each with a bounded queue.
const (
	ringSize      = 4096 // calls ended kept in memory
	maxInFlight   = 4096 // calls in flight followed; past it, a call is shown once it ends
	subQueue      = 256  // events queued for one event stream; past it they are dropped, and counted
	maxStreams    = 32   // event streams open at once
	presenceGrace = 10 * time.Second
)

// liveCall is a call in flight.
type liveCall struct {
	seq        int64
	kind, name string
	start      time.Time
	call       *protocol.Call
}

// ended is a call that ended: its record, and when it ended.
type ended struct {
	e   audit.Entry
	end time.Time
}

// count is what one client did since the bridge started.
type count struct {
	calls, errors int
	last          time.Time
}

// event is one server-sent event.
type event struct {
	name string
	data []byte
}

// sub is one open event stream.
type sub struct {
	ch      chan event
	dropped int // events not queued for want of room; guarded by live.mu
}

// live follows the calls as the registry tells of them, and fans what
// happens out to the event streams. It is safe for concurrent use.
type live struct {
	mu       sync.Mutex
	seq      int64
	inFlight map[*protocol.Call]*liveCall
	ring     []ended // circular, next is the oldest once full
	next     int
	byWho    map[string]*count
	subs     map[*sub]struct{}
	closed   bool
	done     chan struct{} // closed by close
	lastGone time.Time     // when the last stream ended
	onAway   func()        // called when no stream came back within presenceGrace
}

func newLive() *live {
	return &live{inFlight: map[*protocol.Call]*liveCall{}, byWho: map[string]*count{}, subs: map[*sub]struct{}{}, done: make(chan struct{})}
}

// who names a call's client for the console: a named client by its name,
// else what the client calls itself.
func who(principal, client string) string {
	if name, ok := strings.CutPrefix(principal, "client:"); ok {
		return name
	}
	if client == "" {
		return "(unnamed)"
	}
	return client
}

// CallStarted is part of registry.Observer.
func (l *live) CallStarted(call *protocol.Call, kind, name string, at time.Time) {
	l.mu.Lock()
	lc, ok := l.inFlight[call]
	switch {
	case ok:
		lc.kind, lc.name = kind, name // search mode's call_tool, starting the tool it runs
	case len(l.inFlight) >= maxInFlight:
		l.mu.Unlock()
		return
	default:
		l.seq++
		lc = &liveCall{seq: l.seq, kind: kind, name: name, start: at, call: call}
		l.inFlight[call] = lc
	}
	row := lc.row()
	l.mu.Unlock()
	l.publish("call", row)
}

// CallEnded is part of registry.Observer.
func (l *live) CallEnded(call *protocol.Call, e *audit.Entry) {
	now := time.Now()
	l.mu.Lock()
	var seq int64
	if lc, ok := l.inFlight[call]; ok {
		seq = lc.seq
		delete(l.inFlight, call)
	} else {
		l.seq++
		seq = l.seq
	}
	if len(l.ring) < ringSize {
		l.ring = append(l.ring, ended{e: *e, end: now})
	} else {
		l.ring[l.next] = ended{e: *e, end: now}
		l.next = (l.next + 1) % ringSize
	}
	k := who(e.Principal, e.Client)
	c := l.byWho[k]
	if c == nil {
		c = &count{}
		l.byWho[k] = c
	}
	c.calls++
	if e.Outcome != audit.OutcomeOK {
		c.errors++
	}
	c.last = now
	l.mu.Unlock()
	row := rowOf(e)
	row.Seq, row.State = seq, "ended"
	l.publish("call", row)
}

// row is the call in flight as the pages and the event stream show it.
func (lc *liveCall) row() callRow {
	c := lc.call.Client()
	return callRow{Seq: lc.seq, State: "running", Time: lc.start.Local().Format("15:04:05"), Kind: lc.kind, Name: lc.name,
		Client: who(lc.call.Principal().String(), c.Name), Principal: lc.call.Principal().String(), Transport: lc.call.Transport()}
}

// running returns the calls in flight, the oldest first.
func (l *live) running() []callRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]callRow, 0, len(l.inFlight))
	for _, lc := range l.inFlight {
		out = append(out, lc.row())
	}
	sortRows(out)
	return out
}

// toolOf returns the name the call in flight asked for, "" when it is not
// followed.
func (l *live) toolOf(call *protocol.Call) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc, ok := l.inFlight[call]; ok {
		return lc.name
	}
	return ""
}

// recent returns the calls ended that the ring holds, the oldest first.
func (l *live) recent() []ended {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ended, 0, len(l.ring))
	out = append(out, l.ring[l.next:]...)
	return append(out, l.ring[:l.next]...)
}

// counts returns what each client did since the bridge started.
func (l *live) counts() map[string]count {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]count, len(l.byWho))
	for k, c := range l.byWho {
		out[k] = *c
	}
	return out
}

// publish sends an event to every stream that has room for it; a stream
// that has none loses it, counted, and is told so when it has room again.
func (l *live) publish(name string, v any) {
	data, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return
	}
	ev := event{name: name, data: data}
	l.mu.Lock()
	defer l.mu.Unlock()
	for s := range l.subs {
		select {
		case s.ch <- ev:
		default:
			s.dropped++
		}
	}
}

// subscribe opens an event stream; false when too many are open, or the
// console is closed.
func (l *live) subscribe() (*sub, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || len(l.subs) >= maxStreams {
		return nil, false
	}
	s := &sub{ch: make(chan event, subQueue)}
	l.subs[s] = struct{}{}
	return s, true
}

// unsubscribe ends a stream. When it was the last, and none opens within
// presenceGrace, the owner is away: onAway says so.
func (l *live) unsubscribe(s *sub) {
	l.mu.Lock()
	delete(l.subs, s)
	last := len(l.subs) == 0
	if last {
		l.lastGone = time.Now()
	}
	l.mu.Unlock()
	if last {
		time.AfterFunc(presenceGrace, func() {
			if !l.present() && l.onAway != nil {
				l.onAway()
			}
		})
	}
}

// takeDropped returns and clears the count of events s lost.
func (l *live) takeDropped(s *sub) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := s.dropped
	s.dropped = 0
	return n
}

// present reports whether a console is open: an event stream is, or one
// was less than presenceGrace ago (a page being loaded opens its own).
func (l *live) present() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.closed && (len(l.subs) > 0 || !l.lastGone.IsZero() && time.Since(l.lastGone) < presenceGrace)
}

// streams counts the event streams open.
func (l *live) streams() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.subs)
}

func (l *live) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}
