package protocol

import (
	"bytes"
	"strings"
	"testing"
)

// countingWriter counts the writes that reach it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// Messages sent while the writer yields join its write.
func TestTheWriterYieldsBeforeItFlushes(t *testing.T) {
	var w countingWriter
	o := newOutbox(&w)
	yields := 0
	o.yield = func() {
		if yields++; yields == 1 {
			o.Send(msgOf([]byte(`{"b":2}`), nil))
			o.close()
		}
	}
	o.Send(msgOf([]byte(`{"a":1}`), nil))
	o.run()
	if w.writes != 1 || w.String() != "{\"a\":1}\n{\"b\":2}\n" {
		t.Errorf("%d writes of %q, want one of both messages", w.writes, w.String())
	}
}

func TestLineReader(t *testing.T) {
	input := "a\n\nbb\r\nccc\r\r\n" + strings.Repeat("d", 70<<10) + "\ne"
	lr := newLineReader(strings.NewReader(input), 4)
	type line struct {
		text    string
		tooLong bool
	}
	want := []line{{"a", false}, {"", false}, {"bb", false}, {"ccc\r", false}, {strings.Repeat("d", 64<<10), true}, {"e", false}}
	for i, w := range want {
		got, tooLong, err := lr.next()
		if string(got) != w.text || tooLong != w.tooLong {
			t.Errorf("line %d = %.20q (%d bytes), too long %v; want %.20q, %v", i, got, len(got), tooLong, w.text, w.tooLong)
		}
		if (err != nil) != (i == len(want)-1) {
			t.Errorf("line %d: err %v", i, err)
		}
	}
}
