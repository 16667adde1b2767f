package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// One client's many slow calls never stall another's: while a session's
// batch of slow calls holds every backend connection (and, in the second
// row, every slot of --max-total-in-flight), another session's fast call
// waits only for the first to come free, as the fair share by principal
// promises; and every slow call is still answered.
func TestHTTPOneClientNeverStallsAnother(t *testing.T) {
	t.Parallel()
	const slow = 160 // of 300 ms each, over 16 connections: 3 s of work
	for _, row := range []struct {
		name  string
		extra []string
	}{
		{"the backend's connections", nil},
		{"the calls running at once too", []string{"--max-total-in-flight", "20"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			be := backend(t)
			dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
			b := startHTTPBridge(t, dir, be.Path, row.extra...)
			hc := &http.Client{}
			session := func(version string) map[string]string {
				resp, body := post(t, hc, b.url, nil, strings.Replace(initializeBody, "2025-11-25", version, 1))
				if resp.StatusCode != 200 {
					t.Fatalf("initialize: %d %s", resp.StatusCode, body)
				}
				return map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": version}
			}

			busy := session("2025-03-26")
			calls := make([]string, slow)
			for i := range calls {
				calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_notes_slow","arguments":{}}}`, i)
			}
			answered := make(chan string, 1)
			go func() { // ends with the batch's answer, or the test's end
				_, body := post(t, hc, b.url, busy, "["+strings.Join(calls, ",")+"]")
				answered <- body
			}()
			for deadline := time.Now().Add(10 * time.Second); len(be.Requests()) < 16; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the backend got %d of the batch's calls, want 16 at once", len(be.Requests()))
				}
			}

			other := session("2025-11-25")
			var worst time.Duration
			for i := range 8 {
				start := time.Now()
				resp, body := post(t, hc, b.url, other, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"t"}}}`, i))
				took := time.Since(start)
				if resp.StatusCode != 200 || !strings.Contains(body, `"title":"t"`) {
					t.Fatalf("the other client's call: %d %s", resp.StatusCode, body)
				}
				worst = max(worst, took)
			}
			t.Logf("the other client's slowest call took %v while %d slow calls of 300 ms queued", worst, slow)
			// The first connection comes free within 300 ms (twice that
			// when a slot to run in must come free first); three times
			// looser, for a loaded machine.
			if worst > 2*time.Second {
				t.Errorf("the other client's call took %v, stalled behind the first client's", worst)
			}

			select {
			case body := <-answered:
				if n := strings.Count(body, `\"slept\":true`); n != slow {
					t.Errorf("the batch: %d of %d calls answered", n, slow)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the batch was not answered")
			}
		})
	}
}
