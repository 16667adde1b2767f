package registry

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// Bounds of what search mode learns from use.
const (
	learnBytes    = 4 << 20 // of the audit log read at startup, from its end
	learnTools    = 4096    // tools counted; past it, new names are not
	learnSessions = 256     // sessions whose last find_tools answer is kept
	// afterFind is what a call of a tool that the session's last
	// find_tools returned counts, besides the call itself.
	afterFind = 2
)

// usage is what the audit log says of the tools this user calls: how
// often each was called, and how often right after find_tools found it.
// It is safe for concurrent use, and deterministic: the same entries in
// the same order make the same priors.
type usage struct {
	mu     sync.Mutex
	weight map[string]float64 // by client name
	most   float64            // the largest weight
	// found holds each session's last find_tools answer; sessions holds
	// their keys, oldest first, to forget the oldest.
	found    map[string][]string
	sessions []string
}

func newUsage() *usage {
	return &usage{weight: map[string]float64{}, found: map[string][]string{}}
}

// learn counts one audit entry: a find_tools answer, or a call of a
// served tool (in search mode, call_tool's entry names the tool it ran).
func (u *usage) learn(e *audit.Entry) {
	if e.Kind != audit.KindTool {
		return
	}
	session := strconv.Itoa(e.PID) + "/" + e.Session
	u.mu.Lock()
	defer u.mu.Unlock()
	if e.ManifestName == "find_tools" && e.Method == "" {
		if _, ok := u.found[session]; !ok {
			if len(u.sessions) == learnSessions {
				delete(u.found, u.sessions[0])
				u.sessions = slices.Delete(u.sessions, 0, 1)
			}
			u.sessions = append(u.sessions, session)
		}
		u.found[session] = slices.Clone(e.Found)
		return
	}
	if e.Method == "" || e.Outcome != audit.OutcomeOK {
		return
	}
	w, ok := u.weight[e.Name]
	if !ok && len(u.weight) == learnTools {
		return
	}
	w++
	if slices.Contains(u.found[session], e.Name) {
		w += afterFind
	}
	u.weight[e.Name] = w
	u.most = max(u.most, w)
}

// prior returns the prior of the tool with the client name name: 0 for
// a tool never called, 1 for the most called, the logarithm of its
// weight relative to that one's between.
func (u *usage) prior(name string) float64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	w := u.weight[name]
	if w == 0 {
		return 0
	}
	return math.Log1p(w) / math.Log1p(u.most)
}

// read learns from the last learnBytes of the audit log at path and its
// rotated files, oldest entry first. A log that does not exist yet has
// nothing to teach; lines that are not entries are skipped.
func (u *usage) read(path string) error {
	files, err := audit.Files(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var tails [][]byte // newest file first
	left := int64(learnBytes)
	for i := len(files) - 1; i >= 0 && left > 0; i-- {
		data, err := readTail(files[i], left)
		if errors.Is(err, fs.ErrNotExist) {
			continue // rotated away since it was listed
		}
		if err != nil {
			return err
		}
		tails = append(tails, data)
		left -= int64(len(data))
	}
	for _, data := range slices.Backward(tails) {
		for line := range bytes.Lines(data) {
			var e audit.Entry
			if json.Unmarshal(line, &e) == nil {
				u.learn(&e)
			}
		}
	}
	return nil
}

// readTail returns the whole lines of the last n bytes of the file name.
func readTail(name string, n int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from := max(st.Size()-n, 0)
	data := make([]byte, st.Size()-from)
	if _, err := io.ReadFull(io.NewSectionReader(f, from, int64(len(data))), data); err != nil {
		return nil, err
	}
	if from > 0 {
		// The first line is cut: skip it.
		_, data, _ = bytes.Cut(data, []byte("\n"))
	}
	return data, nil
}
