package protocol

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the server lines of testdata/transcripts/*.txtar from what the server writes")

// A transcript is a protocol exchange in testdata/transcripts: a txtar
// archive whose comment says what it shows, with the sections
//
//	-- config --  optional: a transcriptConfig, as JSON
//	-- client --  the lines the client sends, one message per line
//	-- server --  the lines the server writes, in order
//
// The client's lines are sent one at a time; after each, the test waits
// until the server can do no more (synctest, whose clock also runs the
// tools' timers and the progress heartbeats), then the input ends. A
// client line "sleep DURATION" sends nothing: the clock moves on by that
// much, and what the server writes meanwhile is recorded. Every
// server line is checked against the MCP schema of its version. Run with
// -update to rewrite the server sections, and review the diff like code.
type transcriptConfig struct {
	Version       string // the session's version before initialize (default LatestLegacyVersion)
	Instructions  string
	NoListChanged bool
	PageSize      int
	Tools         int // this many generated tools instead of testTools
	MaxHeldBytes  int
	Content       bool // serve fakeContent's resources, prompts and completions
	Tasks         bool // serve taskTools too
	MaxTasks      int
	MaxTaskBytes  int
	MaxTaskTTL    int // seconds
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string][]byte{}
			for _, f := range ar.Files {
				sections[f.Name] = f.Data
			}
			var cfg transcriptConfig
			if c := sections["config"]; len(c) > 0 {
				if err := json.Unmarshal(c, &cfg, json.MatchCaseInsensitiveNames(true)); err != nil {
					t.Fatalf("config: %v", err)
				}
			}
			client := lines(sections["client"])
			var got []string
			synctest.Test(t, func(t *testing.T) { got = runTranscript(t, cfg, client) })
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "server" {
						ar.Files[i].Data = []byte(strings.Join(got, "\n") + "\n")
					}
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if d := cmp.Diff(lines(sections["server"]), got); d != "" {
				t.Errorf("server lines differ (-want +got); run with -update to accept them:\n%s", d)
			}
		})
	}
}

func lines(b []byte) []string {
	var out []string
	for l := range bytes.Lines(b) {
		if l := strings.TrimRight(string(l), "\r\n"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func runTranscript(t *testing.T, cfg transcriptConfig, client []string) []string {
	tools := &fakeTools{set: testTools(), calls: testCalls}
	if cfg.Tasks {
		tools.set = NewToolSet(append(testTools().Tools(), taskTools()...))
	}
	if cfg.Tools > 0 {
		var ts []Tool
		for i := range cfg.Tools {
			ts = append(ts, Tool{Name: fmt.Sprintf("t%d", i), InputSchema: []byte(`{"type":"object"}`)})
		}
		tools.set = NewToolSet(ts)
	}
	srv := newTestServer(tools)
	srv.Instructions = cfg.Instructions
	srv.ListChanged = !cfg.NoListChanged
	srv.PageSize = cfg.PageSize
	srv.MaxHeldBytes = cfg.MaxHeldBytes
	srv.MaxTasks, srv.MaxTaskBytes, srv.MaxTaskTTL = cfg.MaxTasks, cfg.MaxTaskBytes, time.Duration(cfg.MaxTaskTTL)*time.Second
	var tasks int
	srv.taskID = func() string { tasks++; return fmt.Sprintf("task-%d", tasks) }
	if cfg.Content {
		c := newFakeContent()
		srv.Resources, srv.Prompts, srv.Completions = c, c, c
		srv.ResourcesListChanged, srv.PromptsListChanged = srv.ListChanged, srv.ListChanged
	}
	version := cfg.Version
	if version == "" {
		version = LatestLegacyVersion
	}
	s := startSession(t, t.Context(), srv, version)
	var got []string
	for _, line := range client {
		if d, ok := strings.CutPrefix(line, "sleep "); ok {
			dur, err := time.ParseDuration(d)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			time.Sleep(dur)
			got = append(got, s.step()...)
			continue
		}
		got = append(got, s.exchange(line)...)
	}
	rest, err := s.close()
	if err != nil {
		t.Errorf("Serve: %v", err)
	}
	return append(got, rest...)
}
