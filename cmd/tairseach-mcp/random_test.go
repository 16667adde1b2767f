package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// TestRandomisedHostileMix sends a random mix of valid calls and hostile
// input of every class for a while (TAIRSEACH_SOAK, default 2s; the soak
// script runs minutes) against a backend that misbehaves at random, and
// checks that every request with an id got exactly one response and the
// bridge ended cleanly. The seed is logged; TAIRSEACH_SOAK_SEED replays it.
func TestRandomisedHostileMix(t *testing.T) {
	t.Parallel()
	run := 2 * time.Second
	if v := os.Getenv("TAIRSEACH_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("TAIRSEACH_SOAK=%q: %v", v, err)
		}
		run = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TAIRSEACH_SOAK_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (TAIRSEACH_SOAK_SEED replays its inputs and the backend's faults, in the order they are drawn), for %v", seed, run)
	rng := rand.New(rand.NewPCG(seed, seed))
	// The backend draws faults on its handlers' goroutines: from a source
	// of its own, seeded too, behind a lock.
	var faultsMu sync.Mutex
	faults := rand.New(rand.NewPCG(seed, seed+1))

	be := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		switch req.Method {
		case "h.tree":
			return jsontext.Value(deepObject("c", 100, "{}")), nil
		case "h.hang":
			<-ctx.Done()
			return nil, ctx.Err()
		case "h.big":
			return map[string]string{"data": strings.Repeat("b", 1<<20)}, nil
		}
		return map[string]bool{"ok": true}, nil
	})
	be.SetFault(func(sockettest.Request) sockettest.Fault {
		faultsMu.Lock()
		n := faults.IntN(20)
		faultsMu.Unlock()
		switch n {
		case 0:
			return sockettest.FaultGarbage
		case 1:
			return sockettest.FaultCloseMidReply
		}
		return sockettest.FaultNone
	})
	dir := manifestDir(t, map[string]string{"h.json": hostileManifest})
	r := runBridge(t, bridgeCmd(dir, be.Path, "--call-timeout", "300ms", "--max-message-size", "1MiB", "--log-level", "error"))

	// Each maker returns a line; those with an id need exactly one answer.
	makers := []func(id int) string{
		func(id int) string { return callLine(id, "h_bounded", `{"n":`+strconv.Itoa(rng.IntN(200))+`}`) },
		func(id int) string { return callLine(id, "h_tree", deepObject("c", rng.IntN(200), "{}")) },
		func(id int) string {
			return callLine(id, "h_bounded", `{"n":`+strings.Repeat("9", rng.IntN(5000))+`1}`)
		},
		func(id int) string { return callLine(id, "h_hang", `{}`) },
		func(id int) string { return callLine(id, "h_big", `{}`) },
		func(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id) },
		func(id int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"x":"%s"}}`, id, strings.Repeat("p", rng.IntN(2<<20)))
		},
		func(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"nope/%d"}`, id, id) },
		func(id int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":"x"}`, id)
		},
		func(id int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id-1-rng.IntN(5))
		},
		func(int) string { return `{"jsonrpc":"2.0","id":"r","result":{}}` },
		func(int) string { return strings.Repeat("[", rng.IntN(50000)) },
		func(int) string { return "\xff\xfe garbage" },
	}
	answered := map[int]bool{} // id → needs exactly one response
	cancellable := map[int]bool{}
	w := bufio.NewWriter(r.stdin)
	deadline := time.Now().Add(run)
	for id := 1; time.Now().Before(deadline); id++ {
		k := rng.IntN(len(makers))
		fmt.Fprintln(w, makers[k](id))
		switch {
		case k <= 8:
			answered[id] = true
			cancellable[id] = k <= 4
		}
		if rng.IntN(10) == 0 {
			w.Flush()
		}
	}
	w.Flush()
	r.finish(t)
	r.out.mu.Lock()
	defer r.out.mu.Unlock()
	for id := range answered {
		n := len(r.out.responses[strconv.Itoa(id)])
		// A call the mix cancelled may go unanswered; never answered twice.
		if n > 1 || n == 0 && !cancellable[id] {
			t.Errorf("request %d got %d responses", id, n)
		}
	}
	for key, rs := range r.out.responses {
		if id, err := strconv.Atoi(key); err == nil && !answered[id] {
			t.Errorf("id %d, never sent as a request, got %d responses", id, len(rs))
		}
	}
	if rs := r.out.responses[`"r"`]; len(rs) > 0 {
		t.Errorf("a response from the client was answered: %s", rs[0])
	}
	t.Logf("%d requests", len(answered))
}
