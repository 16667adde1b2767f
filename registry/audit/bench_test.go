package audit

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// benchLog returns n entries as a log holds them: 40 tools, 3 clients,
// one call in ten an error.
func benchLog(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	clients := []string{"claude-ai", "claude-code", "cursor-vscode"}
	for i := range n {
		e := Entry{
			Time: Timestamp(start.Add(time.Duration(i) * time.Second)), ID: fmt.Sprintf("1a2b3c4d-%d", i), PID: 4242,
			Transport: "stdio", Session: "9f8e7d6c5b4a3921", Client: clients[i%3], ClientVersion: "1.0.0",
			ProtocolVersion: "2025-11-25", Kind: KindTool, Name: fmt.Sprintf("tairseach_tool_%d", i%40),
			ManifestName: fmt.Sprintf("tool.%d", i%40), Method: fmt.Sprintf("tool.%d", i%40),
			Duration: Millis(time.Duration(i%997) * 137 * time.Microsecond), Outcome: OutcomeOK,
			BytesIn: 40 + i%100, BytesOut: 900 + i%5000, ArgKeys: []string{"query", "limit"},
		}
		if i%10 == 0 {
			code := int64(-32011)
			e.Outcome, e.Code = "backend_error", &code
		}
		b, err := json.Marshal(&e)
		if err != nil {
			tb.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkSummarize sums up a log of a million entries (docs/performance.md).
func BenchmarkSummarize(b *testing.B) {
	data := benchLog(b, 1_000_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := summarize(b.Context(), []io.Reader{bytes.NewReader(data)}, Filter{})
		if err != nil || s.Calls != 1_000_000 {
			b.Fatalf("%v, %d calls", err, s.Calls)
		}
	}
}

// BenchmarkRecord is what recording costs a call: making the entry safe,
// naming it and queueing it, and the arguments' names (Keys). The writer
// goroutine writes meanwhile.
func BenchmarkRecord(b *testing.B) {
	w := NewWriter(b.TempDir()+"/audit.log", Options{QueueSize: 1 << 16})
	defer w.Close()
	args := []byte(`{"to":"ann@example.com","subject":"Lunch","body":"See you at noon.","cc":[]}`)
	b.ReportAllocs()
	for b.Loop() {
		w.Record(&Entry{Kind: KindTool, Name: "tairseach_mail_send", ManifestName: "mail.send", Method: "mail.send",
			Client: "claude-ai", ClientVersion: "0.9.2", Transport: "stdio", Session: "9f8e7d6c5b4a3921", ProtocolVersion: "2025-11-25",
			Outcome: OutcomeOK, Duration: 12.5, BytesIn: len(args), BytesOut: 300, ArgKeys: Keys(args)})
	}
}

// BenchmarkKeys64KiB is the shape of a call with 64 KiB of arguments,
// which a call pays for on its own goroutine.
func BenchmarkKeys64KiB(b *testing.B) {
	args := []byte(`{"data":"` + strings.Repeat("b", 64<<10) + `","n":1}`)
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		if len(Keys(args)) != 2 {
			b.Fatal("not 2 keys")
		}
	}
}
