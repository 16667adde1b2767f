package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// Shutdown refuses new requests with 503, ends the event streams (a
// listen stream with its final result), and lets the calls in flight be
// answered.
func TestShutdownAnswersTheCallsInFlight(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.legacy(t, "2025-11-25")
	get := c.open(http.MethodGet, "")
	answered := make(chan *reply, 1)
	go func() { answered <- c.post(call(2, "gate", `{}`)) }() // ends when the gate opens
	waitFor(t, b.tools.started, "call started")
	m := b.modern(t)
	listen := m.open(http.MethodPost, modern(7, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
	listen.next() // the acknowledgement

	done := make(chan error, 1)
	go func() { done <- b.h.Shutdown(t.Context()) }() // ends when the call is answered
	if evs := get.end(); len(evs) != 0 {
		t.Errorf("the GET stream's last events: %q", evs)
	}
	if evs := listen.end(); len(evs) != 1 || !strings.Contains(evs[0], `"id":7,"result"`) {
		t.Errorf("the listen stream ended with %q, want its result", evs)
	}
	for _, body := range []string{request(3, "ping", ""), initialize(1, "2025-11-25")} {
		if r := c.post(body); r.status != http.StatusServiceUnavailable {
			t.Errorf("a request while shutting down: %d %s", r.status, r.body)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) before the call in flight was answered", err)
	default:
	}
	b.tools.open()
	if r := waitFor(t, answered, "the call's answer"); r.status != http.StatusOK || !strings.Contains(string(r.body), "released") {
		t.Errorf("the call in flight: %d %s", r.status, r.body)
	}
	if err := waitFor(t, done, "Shutdown's end"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// When the grace period ends first, the calls left are cancelled, and
// still answered.
func TestShutdownCancelsWhatOutlivesTheGrace(t *testing.T) {
	t.Parallel()
	b := newBridge(t, Options{}, nil)
	c := b.legacy(t, "2025-11-25")
	answered := make(chan *reply, 1)
	go func() { answered <- c.post(call(2, "wait", `{}`)) }() // ends when the call is cancelled
	waitFor(t, b.tools.started, "call started")
	grace, over := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.h.Shutdown(grace) }() // ends once the grace is over
	over()
	waitFor(t, b.tools.cancelled, "the call's cancellation")
	if r := waitFor(t, answered, "the call's answer"); r.status != http.StatusOK || !strings.Contains(string(r.body), `"isError":true`) {
		t.Errorf("the cancelled call: %d %s", r.status, r.body)
	}
	if err := waitFor(t, done, "Shutdown's end"); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v, want the grace's end", err)
	}
}
