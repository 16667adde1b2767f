package socketclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// TestConcurrentCallsGetTheirOwnReplies hammers one client from 32
// goroutines while the backend misbehaves on random calls, and, with
// crashes, also drops every connection now and then: every call gets its
// own reply or an error, never another call's reply.
func TestConcurrentCallsGetTheirOwnReplies(t *testing.T) {
	faults := []sockettest.Fault{
		sockettest.FaultGarbage, sockettest.FaultWrongID, sockettest.FaultCloseMidReply,
		sockettest.FaultCloseBeforeReply, sockettest.FaultHugeReply, sockettest.FaultNeverReply,
	}
	for _, crashes := range []bool{false, true} {
		t.Run(map[bool]string{false: "faults", true: "faults and crashes"}[crashes], func(t *testing.T) {
			s := sockettest.NewUnstartedServer(t, nil)
			s.HugeSize = 1 << 20
			s.NoRecord = true
			s.Start()
			// The caller picks the fault, so it knows what to expect.
			s.SetFault(func(r sockettest.Request) sockettest.Fault {
				var p struct {
					Fault sockettest.Fault `json:"fault"`
				}
				json.Unmarshal(r.Params, &p)
				return p.Fault
			})
			c := newClient(t, s.Path, &Options{PoolSize: 8, MaxReplySize: 64 << 10})
			var ok, failed atomic.Int64
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					for i := range 200 {
						if crashes && g == 0 && i%10 == 0 {
							s.CloseClientConnections()
						}
						fault := sockettest.FaultNone
						if rng.IntN(10) == 0 {
							fault = faults[rng.IntN(len(faults))]
						}
						params := fmt.Sprintf(`{"g":%d,"i":%d,"fault":%d,"pad":"%s"}`, g, i, fault, strings.Repeat("p", rng.IntN(300)))
						timeout := 5 * time.Second
						if fault == sockettest.FaultNeverReply {
							timeout = 20 * time.Millisecond
						}
						ctx, cancel := context.WithTimeout(t.Context(), timeout)
						res, err := c.Call(ctx, "echo", jsontext.Value(params), nil)
						cancel()
						if err == nil {
							ok.Add(1)
						} else {
							failed.Add(1)
						}
						switch {
						case err == nil && string(res) != params:
							t.Errorf("call %s got another reply: %.100s", params, res)
						case err == nil && fault != sockettest.FaultNone:
							t.Errorf("call with fault %v succeeded", fault)
						case crashes:
							// A crash may fail any call in flight, in any way.
						case err != nil && fault == sockettest.FaultNone:
							t.Errorf("call %.40s failed without a fault: %v", params, err)
						case fault == sockettest.FaultNeverReply && !errors.Is(err, context.DeadlineExceeded),
							fault != sockettest.FaultNone && fault != sockettest.FaultNeverReply && !errors.Is(err, ErrBadReply):
							t.Errorf("call with fault %v: err = %v", fault, err)
						}
					}
				})
			}
			wg.Wait()
			if ok.Load() == 0 || failed.Load() == 0 {
				t.Errorf("%d calls succeeded and %d failed: successes and failures did not mix", ok.Load(), failed.Load())
			}
			// And the pool is healthy afterwards.
			echo(t, c, `"after"`)
		})
	}
}
