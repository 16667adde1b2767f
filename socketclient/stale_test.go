package socketclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// strayBackend answers every request with its params, after first writing
// the lines stray returns for the request's id: what a backend that
// repeated an earlier reply, or got ids wrong, puts in front of the real
// answer. It returns the socket path and a func reporting the ids of the
// requests received and the connections accepted.
func strayBackend(t *testing.T, stray func(id uint64) string) (path string, seen func() (ids []uint64, conns int)) {
	t.Helper()
	var (
		mu    sync.Mutex
		ids   []uint64
		conns = map[*net.UnixConn]bool{}
	)
	path = rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return false
		}
		var req struct {
			ID     uint64
			Params json.RawMessage
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return false
		}
		mu.Lock()
		ids = append(ids, req.ID)
		conns[c] = true
		mu.Unlock()
		// One write, so the stray lines and the reply arrive together:
		// the stray ones are in front of the reply whatever the timing.
		out := stray(req.ID) + fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`+"\n", req.ID, req.Params)
		_, err = c.Write([]byte(out))
		return err == nil
	})
	return path, func() ([]uint64, int) {
		mu.Lock()
		defer mu.Unlock()
		return append([]uint64(nil), ids...), len(conns)
	}
}

func TestAStaleReplyToAnEarlierRequestIsSkipped(t *testing.T) {
	tests := []struct {
		name  string
		stray func(id uint64) string // lines in front of the reply to id
	}{
		{name: "a duplicate of the previous reply", stray: func(id uint64) string {
			if id < 2 {
				return ""
			}
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"duplicate"}`+"\n", id-1)
		}},
		{name: "a duplicate of the previous error", stray: func(id uint64) string {
			if id < 2 {
				return ""
			}
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32011,"message":"late"}}`+"\n", id-1)
		}},
		{name: "several stale replies and a notification", stray: func(id uint64) string {
			var b strings.Builder
			for earlier := uint64(1); earlier < id; earlier++ {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":null}`+"\n", earlier)
			}
			b.WriteString(`{"jsonrpc":"2.0","method":"note"}` + "\n")
			return b.String()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, seen := strayBackend(t, tt.stray)
			var logs bytes.Buffer
			log := zerolog.New(&logs).Level(zerolog.DebugLevel)
			c := newClient(t, path, &Options{PoolSize: 1, AllowAnyPeer: true, Logger: &log})
			for i := range 3 {
				echo(t, c, fmt.Sprintf(`{"call":%d}`, i))
			}
			ids, conns := seen()
			if fmt.Sprint(ids) != "[1 2 3]" || conns != 1 {
				t.Errorf("backend saw requests %v on %d connections, want [1 2 3] on 1: each call sent once, the connection kept", ids, conns)
			}
			if !strings.Contains(logs.String(), `"reply_id":1,"id":2,"message":"skipping a stale backend reply to an earlier request"`) {
				t.Errorf("no debug log naming the skipped reply's id and ours:\n%s", logs.String())
			}
		})
	}
}

func TestAReplyWithAnIDThatIsNotEarlierIsABadReply(t *testing.T) {
	tests := []struct {
		name string
		id   func(ours uint64) string // the stray reply's id; "" for none
		text string
	}{
		{name: "a higher id", id: func(ours uint64) string { return fmt.Sprint(ours + 1) }, text: "answered id 3 to request id 2"},
		{name: "a much higher id", id: func(uint64) string { return "18446744073709551615" }, text: "answered id 18446744073709551615"},
		{name: "an id beyond 64 bits", id: func(uint64) string { return "99999999999999999999999" }, text: "answered id 99999999999999999999999"},
		{name: "a string id, even of an earlier number", id: func(uint64) string { return `"1"` }, text: `answered id "1"`},
		{name: "a zero id", id: func(uint64) string { return "0" }, text: "answered id 0"},
		{name: "a negative id", id: func(uint64) string { return "-1" }, text: "answered id -1"},
		{name: "an earlier number written as a fraction", id: func(uint64) string { return "1.0" }, text: "answered id 1.0"},
		{name: "an earlier number written with an exponent", id: func(uint64) string { return "1e0" }, text: "answered id 1e0"},
		{name: "a null id", id: func(uint64) string { return "null" }, text: "answered id null"},
		{name: "no id", id: func(uint64) string { return "" }, text: "answered no id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, seen := strayBackend(t, func(ours uint64) string {
				if ours < 2 {
					return ""
				}
				if id := tt.id(ours); id != "" {
					return `{"jsonrpc":"2.0","id":` + id + `,"result":"stray"}` + "\n"
				}
				return `{"jsonrpc":"2.0","result":"stray"}` + "\n"
			})
			c := newClient(t, path, &Options{PoolSize: 1, AllowAnyPeer: true})
			echo(t, c, `"first"`)
			_, err := c.Call(callCtx(t, 5*time.Second), "m", json.RawMessage(`"second"`))
			if !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want ErrBadReply containing %q", err, tt.text)
			}
			if ids, _ := seen(); fmt.Sprint(ids) != "[1 2]" {
				t.Errorf("backend saw requests %v, want [1 2]: a call that may have run is not sent again", ids)
			}
		})
	}
}

func TestIDBefore(t *testing.T) {
	tests := []struct {
		raw  string
		id   uint64
		want bool
	}{
		{"1", 2, true},
		{"41", 42, true},
		{"18446744073709551614", 18446744073709551615, true},
		{"2", 2, false},
		{"3", 2, false},
		{"18446744073709551615", 18446744073709551615, false},
		{"18446744073709551616", 18446744073709551615, false},
		{"99999999999999999999", 18446744073709551615, false},
		{"100000000000000000000", 18446744073709551615, false},
		{"0", 2, false},
		{"01", 2, false},
		{"-1", 2, false},
		{"1.0", 2, false},
		{"1e0", 2, false},
		{`"1"`, 2, false},
		{"null", 2, false},
		{"", 2, false},
	}
	for _, tt := range tests {
		if got := idBefore([]byte(tt.raw), tt.id); got != tt.want {
			t.Errorf("idBefore(%s, %d) = %v, want %v", tt.raw, tt.id, got, tt.want)
		}
	}
	raw := []byte("12345")
	if n := testing.AllocsPerRun(100, func() { idBefore(raw, 99999) }); n != 0 {
		t.Errorf("idBefore allocates %v times per call, want 0", n)
	}
}

// A backend that always answers "id":1 (it numbers replies itself, say):
// on a fresh connection a lower id is a bad reply at once; on one that
// carried id 1, the call waits for its timeout, then reports the earlier
// id it got instead of a bare timeout.
func TestALowerIDThatThisConnectionNeverCarriedIsABadReply(t *testing.T) {
	path := rawBackend(t, func(c *net.UnixConn, r *bufio.Reader) bool {
		if _, err := r.ReadBytes('\n'); err != nil {
			return false
		}
		_, err := c.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"x"}` + "\n"))
		return err == nil
	})
	c := newClient(t, path, &Options{PoolSize: 1, AllowAnyPeer: true})
	if _, err := c.Call(callCtx(t, 5*time.Second), "m", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err) // id 1 matches
	}
	_, err := c.CallWithin(t.Context(), 100*time.Millisecond, "m", json.RawMessage(`{}`))
	if !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), "answered id 1, an earlier request's, and nothing to request id 2") {
		t.Errorf("second call on the connection = %v, want the earlier id named as a bad reply", err)
	}

	fresh := newClient(t, path, &Options{PoolSize: 1, AllowAnyPeer: true})
	fresh.nextID.Store(41)
	start := time.Now()
	_, err = fresh.CallWithin(t.Context(), 10*time.Second, "m", json.RawMessage(`{}`))
	if !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), "answered id 1 to request id 42") {
		t.Errorf("first call on a fresh connection = %v, want a bad reply", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the bad reply took %v: the call waited instead of failing", d)
	}
}
