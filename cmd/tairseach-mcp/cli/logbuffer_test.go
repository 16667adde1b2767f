package cli

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stuckWriter is a stderr that nobody reads until release is closed: its
// first Write says so on entered and blocks.
type stuckWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once

	mu  sync.Mutex
	out bytes.Buffer
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

func (w *stuckWriter) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.SplitAfter(w.out.String(), "\n")
}

// newTestBuffer returns a buffer of max bytes in front of w that reports
// dropped lines as "dropped N", and says on noticed when it has.
func newTestBuffer(w *stuckWriter, max int) (b *logBuffer, noticed <-chan struct{}) {
	c := make(chan struct{}, 100)
	return newLogBuffer(w, max, func(n int) {
		fmt.Fprintf(w, "dropped %d\n", n)
		c <- struct{}{}
	}), c
}

func TestLogLinesPassInOrder(t *testing.T) {
	t.Parallel()
	w := newStuckWriter()
	close(w.release)
	b, _ := newTestBuffer(w, 1<<10)
	for i := range 100 {
		fmt.Fprintf(b, "line %d\n", i)
	}
	b.Close()
	var want []string
	for i := range 100 {
		want = append(want, fmt.Sprintf("line %d\n", i))
	}
	if d := cmp.Diff(append(want, ""), w.lines()); d != "" {
		t.Errorf("written (-want +got):\n%s", d)
	}
}

func TestAStderrNobodyReadsNeverBlocksALogger(t *testing.T) {
	t.Parallel()
	w := newStuckWriter()
	b, noticed := newTestBuffer(w, 40) // room for four 10-byte lines
	fmt.Fprintf(b, "first   1\n")
	<-w.entered // the writer holds the first line, stuck in stderr
	for i := range 10 {
		fmt.Fprintf(b, "queued %02d\n", i) // none of these may block
	}
	fmt.Fprintf(b, "small\n") // there would be room, but dropping has begun: order is kept
	close(w.release)          // stderr drains
	<-noticed
	fmt.Fprintf(b, "taken again\n")
	b.Close()
	want := []string{"first   1\n", "queued 00\n", "queued 01\n", "queued 02\n", "queued 03\n", "dropped 7\n", "taken again\n", ""}
	if d := cmp.Diff(want, w.lines()); d != "" {
		t.Errorf("written (-want +got):\n%s", d)
	}
}

func TestALineLargerThanTheBufferIsDroppedAndCounted(t *testing.T) {
	t.Parallel()
	w := newStuckWriter()
	close(w.release)
	b, _ := newTestBuffer(w, 16)
	fmt.Fprintf(b, "%s\n", strings.Repeat("x", 16))
	b.Close()
	if got := strings.Join(w.lines(), ""); got != "dropped 1\n" {
		t.Errorf("written %q, want only the count", got)
	}
}

func TestClosingWithStderrStuckEndsWithinItsBound(t *testing.T) {
	t.Parallel()
	w := newStuckWriter()
	b, _ := newTestBuffer(w, 1<<10)
	b.wait = 10 * time.Millisecond
	fmt.Fprintf(b, "never read\n")
	<-w.entered
	b.Close() // returns although the writer is stuck: else the test times out
	close(w.release)
	<-b.done
}

func TestAWriteNeverHoldsMoreThanTheBuffer(t *testing.T) {
	t.Parallel()
	w := newStuckWriter()
	b, _ := newTestBuffer(w, 1000)
	fmt.Fprintf(b, "x\n")
	<-w.entered
	for range 1000 {
		fmt.Fprintf(b, "%s\n", strings.Repeat("y", 99))
	}
	b.mu.Lock()
	held := cap(b.buf)
	b.mu.Unlock()
	if held > 1000 {
		t.Errorf("the buffer holds %d bytes, more than its 1000", held)
	}
	close(w.release)
	b.Close()
}
