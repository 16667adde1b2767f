package console

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// The audit log is shared by every bridge of the user and may hold
// millions of entries over its rotated files: the console reads its tail
// only. The first look reads the last tailBytes (from the rotated files
// too when the log itself holds less), and each later look only what was
// appended since; a rotation starts over. It keeps the last tailEntries
// entries.
const (
	tailEntries = 10000
	tailBytes   = 4 << 20
	tailEvery   = 500 * time.Millisecond // a page loaded meanwhile reads no file
)

// tail follows the end of an audit log. It is safe for concurrent use.
type tail struct {
	path string
	max  int

	mu      sync.Mutex
	file    os.FileInfo // the log as last read; nil before the first look
	off     int64       // read up to here: the end of its last whole line
	entries []audit.Entry
	err     error
	looked  time.Time
}

func newTail(path string, max int) *tail { return &tail{path: path, max: max} }

// Entries returns the last entries of the log, the oldest first, and the
// error of the last look, if any. The slice is the tail's: read it only.
func (t *tail) Entries() ([]audit.Entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Since(t.looked) >= tailEvery {
		t.look()
		t.looked = time.Now()
	}
	return t.entries, t.err
}

// look reads what was appended since the last look, or the tail afresh.
func (t *tail) look() {
	fi, err := os.Stat(t.path)
	if err != nil {
		t.err = err
		return
	}
	t.err = nil
	if t.file != nil && os.SameFile(t.file, fi) && fi.Size() >= t.off {
		if fi.Size() > t.off {
			t.read(t.path, t.off, fi.Size())
		}
		t.file = fi
		return
	}
	// The first look, or the log was rotated: its tail afresh.
	t.entries, t.file, t.off = nil, fi, 0
	files, err := audit.Files(t.path)
	if err != nil {
		t.err = err
		return
	}
	left := int64(tailBytes)
	var parts [][]byte
	for i := len(files) - 1; i >= 0 && left > 0; i-- {
		data, from, err := readEnd(files[i], left)
		if err != nil {
			continue // rotated away meanwhile
		}
		parts = append(parts, data)
		left -= int64(len(data))
		if files[i] == t.path {
			t.off = from + int64(len(data))
		}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		t.parse(parts[i])
	}
}

// read reads the log from off to size, and parses its whole lines.
func (t *tail) read(path string, off, size int64) {
	if size-off > tailBytes { // a burst: its end is enough
		off = size - tailBytes
		t.entries = nil
	}
	f, err := os.Open(path)
	if err != nil {
		t.err = err
		return
	}
	defer f.Close()
	data := make([]byte, size-off)
	n, err := io.ReadFull(io.NewSectionReader(f, off, size-off), data)
	if err != nil && err != io.ErrUnexpectedEOF {
		t.err = err
		return
	}
	data = data[:n]
	whole := wholeLines(data)
	if off != t.off { // started mid-line
		_, rest, _ := bytes.Cut(data[:whole], []byte("\n"))
		t.parse(rest)
	} else {
		t.parse(data[:whole])
	}
	t.off = off + int64(whole)
}

// parse adds the calls of whole lines, keeping the last max: not the
// lines that count lost entries, nor those of a task's creation and end,
// written beside its call's own line.
func (t *tail) parse(data []byte) {
	for line := range bytes.Lines(data) {
		var e audit.Entry
		if json.Unmarshal(bytes.TrimSpace(line), &e, json.RejectUnknownMembers(false)) != nil || e.Kind == audit.KindDropped || e.Kind == audit.KindTask || e.Kind == "" {
			continue
		}
		t.entries = append(t.entries, e)
	}
	if over := len(t.entries) - t.max; over > 0 {
		t.entries = append(t.entries[:0:0], t.entries[over:]...)
	}
}

// wholeLines returns the length of data's whole lines.
func wholeLines(data []byte) int { return bytes.LastIndexByte(data, '\n') + 1 }

// readEnd returns the whole lines of the last n bytes of the file name
// (the first, cut, skipped), and the offset they start at.
func readEnd(name string, n int64) ([]byte, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	from := max(st.Size()-n, 0)
	data := make([]byte, st.Size()-from)
	if _, err := io.ReadFull(io.NewSectionReader(f, from, int64(len(data))), data); err != nil {
		return nil, 0, err
	}
	if from > 0 {
		i := bytes.IndexByte(data, '\n') + 1
		data, from = data[i:], from+int64(i)
	}
	return data[:wholeLines(data)], from, nil
}
