package mcphttp

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// When the sessions are full, a new one ends the one idle the longest;
// one that is busy (a call in flight, a request or a GET stream open) is
// never ended, and when all are, the new one is refused with 503.
func TestFullSessionsEndTheOldestIdleOne(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{MaxSessions: 3}, nil)
	calling := b.legacy(t, "2025-11-25")
	answered := make(chan *reply, 1)
	go func() { answered <- calling.post(call(2, "gate", `{}`)) }() // ends when the gate opens
	waitFor(t, b.tools.started, "call started")
	older := b.legacy(t, "2025-11-25")
	newer := b.legacy(t, "2025-11-25")
	newer.post(request(2, "ping", ""))

	fourth := b.legacy(t, "2025-11-25") // ends older, idle the longest
	if r := older.post(request(3, "ping", "")); r.status != http.StatusNotFound {
		t.Errorf("the session idle the longest: %d %s", r.status, r.body)
	}
	for _, c := range []*client{newer, fourth} {
		if r := c.post(request(3, "ping", "")); r.status != http.StatusOK {
			t.Errorf("a session that should live: %d %s", r.status, r.body)
		}
	}

	// newer listens on its GET stream: it is busy too, as is fourth with
	// its own request open. No session can make room.
	newer.open(http.MethodGet, "")
	fourthAnswered := make(chan *reply, 1)
	go func() { fourthAnswered <- fourth.post(call(2, "gate", `{}`)) }() // ends when the gate opens
	waitFor(t, b.tools.started, "second call started")
	c := b.modern(t)
	c.version = ""
	if r := c.post(initialize(1, "2025-11-25")); r.status != http.StatusServiceUnavailable {
		t.Errorf("a session past the limit when all are busy: %d %s", r.status, r.body)
	}
	b.tools.open()
	for _, ch := range []chan *reply{answered, fourthAnswered} { // before the test ends, which closes the bridge
		if r := waitFor(t, ch, "a busy session's answer"); r.status != http.StatusOK {
			t.Errorf("a busy session's call: %d %s", r.status, r.body)
		}
	}
}

// Calls run within two limits: per session (the server's MaxInFlight)
// and over all sessions (MaxTotalInFlight). Past them, calls wait their
// turn, and other requests are still answered.
func TestCallsInFlightAreBoundedPerSessionAndInTotal(t *testing.T) {
	inBubble(t, Options{}, func(s *protocol.Server) { s.MaxInFlight, s.MaxTotalInFlight = 1, 2 }, func(t *testing.T, b *bridge) {
		a, bb, c := b.legacy(t, "2025-11-25"), b.legacy(t, "2025-11-25"), b.legacy(t, "2025-11-25")
		answered := make(chan *reply, 4)
		for i, cl := range []*client{a, a, bb, c} {
			go func() { answered <- cl.post(call(10+i, "gate", `{}`)) }() // ends when the gate opens
		}
		synctest.Wait()
		if n := len(b.tools.started); n != 2 {
			t.Errorf("%d calls running, want 2: one of a's and one of b's or c's", n)
		}
		if r := a.post(request(3, "ping", "")); r.status != http.StatusOK {
			t.Errorf("ping while calls wait: %d %s", r.status, r.body)
		}
		b.tools.open()
		for range 4 {
			if r := <-answered; r.status != http.StatusOK || !strings.Contains(string(r.body), "released") {
				t.Errorf("a call: %d %s", r.status, r.body)
			}
		}
		if n := len(b.tools.started); n != 4 {
			t.Errorf("%d calls ran, want 4", n)
		}
	})
}

// A session no client has used for SessionTimeout is ended, and its
// calls cancelled; one whose client waits for an answer, or listens on
// its GET stream, is in use however long that takes.
func TestIdleSessionsEnd(t *testing.T) {
	// No keep-alive comments: a pipe holds no bytes, so one would stall
	// the stream the test reads only at its end.
	inBubble(t, Options{SessionTimeout: time.Minute, KeepAlive: time.Hour}, nil, func(t *testing.T, b *bridge) {
		idle := b.legacy(t, "2025-11-25")
		listening := b.legacy(t, "2025-11-25")
		get := listening.open(http.MethodGet, "")
		waiting := b.legacy(t, "2025-11-25")
		go waiting.post(call(2, "gate", `{}`)) // ends when the gate opens
		abandoned := b.legacy(t, "2025-11-25")
		ctx, hangUp := context.WithCancel(t.Context())
		abandoned.check.ClientLine([]byte(call(2, "wait", `{}`)))
		go func() { // ends when the client hangs up
			if resp, err := b.hc.Do(abandoned.request(ctx, http.MethodPost, call(2, "wait", `{}`), nil)); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		hangUp()
		synctest.Wait()
		if n := len(b.tools.cancelled); n != 0 {
			t.Fatalf("%d calls cancelled before the timeout", n)
		}

		time.Sleep(59 * time.Second)
		synctest.Wait()
		if n := b.h.Sessions(); n != 4 {
			t.Errorf("%d sessions before the timeout, want 4", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := len(b.tools.cancelled); got != 1 {
			t.Errorf("%d calls cancelled, want the abandoned session's", got)
		}
		for _, c := range []*client{idle, abandoned} {
			if r := c.post(request(3, "ping", "")); r.status != http.StatusNotFound {
				t.Errorf("an idle session after the timeout: %d %s", r.status, r.body)
			}
		}
		for _, c := range []*client{listening, waiting} {
			if r := c.post(request(3, "ping", "")); r.status != http.StatusOK {
				t.Errorf("a session in use after the timeout: %d %s", r.status, r.body)
			}
		}
		b.srv.NotifyToolsChanged()
		if got := method(get.next()); got != "notifications/tools/list_changed" {
			t.Errorf("the GET stream after the timeout: %s", got)
		}
	})
}

// A session timeout of a few nanoseconds is a timeout like another: the
// sweep's period does not fall to zero (a ticker's panic).
func TestATinySessionTimeoutWorks(t *testing.T) {
	inBubble(t, Options{SessionTimeout: 3 * time.Nanosecond}, nil, func(t *testing.T, b *bridge) {
		c := b.legacy(t, "2025-11-25")
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if r := c.post(request(3, "ping", "")); r.status != http.StatusNotFound {
			t.Errorf("a session past a timeout of 3ns: %d %s", r.status, r.body)
		}
	})
}

// An event stream with nothing to say sends a comment every KeepAlive,
// so that proxies and clients do not take it for dead.
func TestIdleStreamsSendKeepAliveComments(t *testing.T) {
	inBubble(t, Options{KeepAlive: 25 * time.Second}, nil, func(t *testing.T, b *bridge) {
		c := b.legacy(t, "2025-11-25")
		s := c.open(http.MethodGet, "")
		start := time.Now()
		line, err := bufio.NewReader(s.resp.Body).ReadString('\n')
		if err != nil || line != ":\n" {
			t.Fatalf("read %q, %v; want a comment", line, err)
		}
		if d := time.Since(start); d != 25*time.Second {
			t.Errorf("the first comment came after %s, want 25s", d)
		}
	})
}
