package audit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/rs/zerolog"
)

// Defaults of Options.
const (
	DefaultMaxSize   = 10 << 20
	DefaultKeep      = 5
	DefaultQueueSize = 1024
)

// Options configure a Writer. The zero value of each field means its default.
type Options struct {
	// MaxSize is the size in bytes past which the log is rotated
	// (default 10 MiB).
	MaxSize int64
	// Keep is the number of rotated files kept, PATH.1 (the newest) to
	// PATH.<Keep> (default 5).
	Keep int
	// QueueSize bounds the entries waiting to be written (default 1024).
	// Past it entries are dropped, and counted.
	QueueSize int
	// Logger receives the writer's own trouble; nil means none.
	Logger *zerolog.Logger
}

// Bounds of the writer's work.
const (
	maxBatch     = 256 << 10             // bytes of lines written at once, with a large MaxSize
	gatherFor    = 10 * time.Millisecond // the queue holds what 100,000 calls a second record meanwhile
	closeTimeout = 5 * time.Second
)

// Writer appends entries to an audit log that other processes may share.
// Record never blocks; one goroutine, which Close ends, writes what was
// recorded within 10 ms, a batch of whole lines at a time. A log
// that cannot be written never stops anything: the trouble is logged
// once at error level, the entries it loses are counted, and the writer
// tries again with the next ones. Writer is safe for concurrent use.
type Writer struct {
	path    string
	log     zerolog.Logger
	queue   chan *Entry
	wake    chan struct{} // a dropped entry asks for the count to be written
	closing chan struct{}
	done    chan struct{}
	close   sync.Once
	dropped atomic.Int64 // entries lost and not yet reported in a KindDropped line

	prefix string // of entry IDs, random per Writer
	seq    atomic.Uint64
	pid    int

	// Used by the writer goroutine only.
	batchMax int // bytes of lines written at once: at most MaxSize
	file     logFile
	failing  bool // the last write failed; logged once
}

// NewWriter returns a Writer appending to the log at path, created (with
// its folder) when missing, and starts its goroutine. It tries the file
// at once, so that a log that cannot be written is reported before the
// first call.
func NewWriter(path string, opts Options) *Writer {
	w := &Writer{
		path:    path,
		log:     zerolog.Nop(),
		queue:   make(chan *Entry, positiveOr(opts.QueueSize, DefaultQueueSize)),
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		prefix:  randomHex(4),
		pid:     os.Getpid(),
		file:    logFile{path: path, maxSize: positiveOr(opts.MaxSize, DefaultMaxSize), keep: positiveOr(opts.Keep, DefaultKeep)},
	}
	w.batchMax = int(min(maxBatch, w.file.maxSize))
	if opts.Logger != nil {
		w.log = *opts.Logger
	}
	if err := w.file.open(); err != nil {
		w.fail(err)
	}
	// Owned by the Writer: Close ends it and waits for it.
	go w.run()
	return w
}

func positiveOr[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// nextID returns the ID of the next entry.
func (w *Writer) nextID() string {
	return w.prefix + "-" + strconv.FormatUint(w.seq.Add(1), 10)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Record queues e to be written and returns at once; when the queue is
// full, e is dropped and counted. It sets e's ID and PID, the current
// time when e has none, and makes e's text safe (see safetext.Field).
// The Writer owns e afterwards. Entries recorded after Close are lost.
func (w *Writer) Record(e *Entry) {
	e.ID, e.PID = w.nextID(), w.pid
	if e.Time == "" {
		e.Time = Timestamp(time.Now())
	}
	e.clean()
	select {
	case w.queue <- e:
	default:
		w.dropped.Add(1)
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// Close writes what is queued and stops the writer. It waits at most 5
// seconds for a file that blocks (a hung file system, a lock another
// process keeps), then gives up and says so.
func (w *Writer) Close() error {
	w.close.Do(func() { close(w.closing) })
	select {
	case <-w.done:
		return nil
	case <-time.After(closeTimeout):
		return fmt.Errorf("audit log %s: not written within %s; the last entries are lost", w.path, closeTimeout)
	}
}

// run writes batches as entries come. After the first entry of a batch
// it lets others gather for gatherFor, without being woken for each, so
// that a busy bridge writes many lines per write(2) and wakes its writer
// once for them; a quiet one writes each entry within gatherFor.
func (w *Writer) run() {
	defer close(w.done)
	defer w.file.close()
	var batch []byte
	for {
		n := 0
		select {
		case e := <-w.queue:
			batch, n = w.add(batch, n, e)
			select {
			case <-time.After(gatherFor):
			case <-w.closing:
				w.drain(batch, n)
				return
			}
		case <-w.wake:
		case <-w.closing:
			w.drain(batch, n)
			return
		}
		batch, n = w.collect(batch, n)
		w.flush(batch, n)
		batch = batch[:0]
	}
}

// collect adds the queued entries to batch, until it holds batchMax
// bytes.
func (w *Writer) collect(batch []byte, n int) ([]byte, int) {
	for len(batch) < w.batchMax {
		select {
		case e := <-w.queue:
			batch, n = w.add(batch, n, e)
		default:
			return batch, n
		}
	}
	return batch, n
}

// drain writes the n entries of batch and everything still queued, at
// Close.
func (w *Writer) drain(batch []byte, n int) {
	for {
		batch, n = w.collect(batch, n)
		w.flush(batch, n) // with n == 0, the count of dropped entries, if any
		if n == 0 {
			return
		}
		batch, n = batch[:0], 0
	}
}

// add appends e's line to batch, which holds n entries; an entry that
// cannot be encoded is counted as dropped.
func (w *Writer) add(batch []byte, n int, e *Entry) ([]byte, int) {
	b, err := json.Marshal(e)
	if err != nil {
		w.log.Error().Err(err).Str("audit_log", w.path).Msg("audit entry cannot be encoded")
		w.dropped.Add(1)
		return batch, n
	}
	return append(append(batch, b...), '\n'), n + 1
}

// flush writes the n entries of batch, after the line that counts the
// entries dropped since the last one, if any.
func (w *Writer) flush(batch []byte, n int) {
	lost := w.dropped.Swap(0)
	if lost > 0 {
		line, _ := w.add(nil, 0, &Entry{Time: Timestamp(time.Now()), ID: w.nextID(), PID: w.pid, Kind: KindDropped, Dropped: lost})
		batch = append(line, batch...)
	}
	if len(batch) == 0 {
		return
	}
	if err := w.file.write(batch); err != nil {
		w.dropped.Add(lost + int64(n))
		w.fail(err)
		return
	}
	if w.failing {
		w.failing = false
		w.log.Info().Str("audit_log", w.path).Msg("audit log written again; the entries lost meanwhile are counted in it")
	}
}

// fail logs the first of a run of failed writes.
func (w *Writer) fail(err error) {
	if w.failing {
		return
	}
	w.failing = true
	w.log.Error().Err(err).Str("audit_log", w.path).Msg("audit log cannot be written; calls go on, unrecorded, until it can")
}
