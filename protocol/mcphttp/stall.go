package mcphttp

import (
	"net/http"
	"time"
)

// progressStep is the progress a client must make per stall timeout to
// keep its response: this many bytes read, or all there was to write.
const progressStep = 64 << 10

// stallWriter writes a response, JSON or an event stream, to a client
// that must keep reading it. The stall timeout runs from the first byte
// of a burst (a response, or the events queued at once) and starts again
// each time progressStep bytes of it have been written; when the burst
// is written and flushed, the client has caught up, and the clock stops
// until the next. So a client that reads steadily, however slowly the
// whole takes, keeps its response; one that reads less than progressStep
// per timeout, or stops, loses it: the write fails, and the connection
// closes. The clock is the connection's write deadline; a ResponseWriter
// without deadlines is written without a bound.
//
// An event stream's keep-alive comment is written only once the stream
// has caught up: it is then all there is to write, and its few bytes end
// its burst, so a comment never keeps alive a response with more to send.
//
// It is used by one goroutine, the handler's.
type stallWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	busy  bool // a burst is being written: the clock runs
	since int  // bytes of the burst written since the clock last started
}

func newStallWriter(w http.ResponseWriter, stall time.Duration) *stallWriter {
	return &stallWriter{w: w, rc: http.NewResponseController(w), stall: stall}
}

// restart starts the clock again.
func (s *stallWriter) restart() {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall)) // not every ResponseWriter has deadlines
	s.busy, s.since = true, 0
}

// Write writes p, starting the clock again at every progressStep bytes.
func (s *stallWriter) Write(p []byte) (n int, err error) {
	for len(p) > 0 {
		if !s.busy || s.since >= progressStep {
			s.restart()
		}
		k, err := s.w.Write(p[:min(len(p), progressStep-s.since)])
		n, s.since, p = n+k, s.since+k, p[k:]
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Flush sends what is buffered to the client, the rest of the burst:
// once it is, the client has caught up and the clock stops.
func (s *stallWriter) Flush() error {
	if !s.busy || s.since >= progressStep {
		s.restart()
	}
	if err := s.rc.Flush(); err != nil {
		return err
	}
	s.busy = false
	return nil
}
