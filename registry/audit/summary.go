package audit

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Filter selects the entries a summary counts. The zero value selects
// every entry.
type Filter struct {
	// Since and Until bound the entries' times: Since included, Until
	// not. A zero time does not bound.
	Since, Until time.Time
	// Tool, when set, is a glob (path.Match's syntax) that the entry's
	// name or its manifest name must match.
	Tool string
}

// window is a Filter's times as Entry.Time has them; "" does not bound.
type window struct{ since, until string }

func (f *Filter) window() window {
	var w window
	if !f.Since.IsZero() {
		w.since = Timestamp(f.Since)
	}
	if !f.Until.IsZero() {
		w.until = Timestamp(f.Until)
	}
	return w
}

// match reports whether f, whose times are w, selects e.
func (f *Filter) match(e *Entry, w window) bool {
	if w.since != "" && e.Time < w.since || w.until != "" && e.Time >= w.until {
		return false
	}
	if f.Tool == "" {
		return true
	}
	ok, _ := path.Match(f.Tool, e.Name)
	if !ok && e.ManifestName != "" {
		ok, _ = path.Match(f.Tool, e.ManifestName)
	}
	return ok
}

// Summary sums up the calls of an audit log.
type Summary struct {
	// Files are the files read, oldest first.
	Files []string `json:"files"`
	// First and Last are the times of the first and the last call
	// counted, as entries have them.
	First string `json:"first,omitzero"`
	Last  string `json:"last,omitzero"`
	// Calls and Errors count the calls, and those whose outcome was not ok.
	Calls  int `json:"calls"`
	Errors int `json:"errors"`
	// Tools has one row per thing called (tool, resource, prompt), the
	// most called first; Clients one per client name (what the client
	// calls itself); Principals one per principal (who the call was for:
	// a named client, a token's holder, the process).
	Tools      []Row `json:"tools"`
	Clients    []Row `json:"clients"`
	Principals []Row `json:"principals"`
	// Confirmations counts the calls the user was asked to confirm, by
	// answer.
	Confirmations Confirmations `json:"confirmations"`
	// Tasks counts the tasks created, and those ended, by how.
	Tasks Tasks `json:"tasks"`
	// Dropped is the number of entries the writers reported lost.
	Dropped int64 `json:"dropped"`
	// Truncated counts the entries cut short (the last line of a file
	// being written, or left by a killed writer), Foreign the other lines
	// that are not entries. Neither is counted otherwise.
	Truncated int `json:"truncated"`
	Foreign   int `json:"foreign"`
}

// Row is what was called, or who called, with how it went.
type Row struct {
	// Kind is the entry kind (tool, resource, prompt), in a row of Tools.
	Kind string `json:"kind,omitzero"`
	// Name is the tool's (resource's, prompt's) or the client's name.
	Name string `json:"name"`
	// Versions are the client versions seen, in a row of Clients.
	Versions []string `json:"versions,omitzero"`
	Calls    int      `json:"calls"`
	// Errors counts the calls that failed, by outcome (and backend code),
	// the most frequent first.
	Errors []ErrorCount `json:"errors"`
	// Asked and Refused count the calls the user was asked to confirm,
	// and those not accepted.
	Asked   int `json:"asked,omitzero"`
	Refused int `json:"refused,omitzero"`
	// P50, P95 and Max are the calls' durations in milliseconds.
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	Max float64 `json:"max_ms"`
	// BytesIn and BytesOut sum the sizes of the arguments and results.
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
	// LastUse is the time of the latest call, as entries have it.
	LastUse string `json:"last_use"`
}

// ErrorCount counts the failed calls of one outcome, and for backend
// errors of one code.
type ErrorCount struct {
	Outcome string `json:"outcome"`
	Code    *int64 `json:"code,omitzero"`
	Count   int    `json:"count"`
}

// Confirmations count the calls the user was asked to confirm, and the
// answers ("none": the entry has no answer); and the answers refused
// unread (a forged, expired, replayed or misused requestState), by why.
type Confirmations struct {
	Asked    int            `json:"asked"`
	Answers  map[string]int `json:"answers,omitzero"`
	Refusals map[string]int `json:"refusals,omitzero"`
}

// Tasks count the tasks created, and those ended by how they ended
// (completed, failed, cancelled, expired). A task's backend call is
// counted with the calls.
type Tasks struct {
	Created int            `json:"created"`
	Ended   map[string]int `json:"ended,omitzero"`
}

// Summarize reads the log at path and its rotated files (see Files) and
// sums up the entries f selects. Lines that are not entries are counted
// and skipped; only a file that cannot be read is an error. (A file that
// a bridge's rotation renames meanwhile may be missed or read twice.)
func Summarize(ctx context.Context, path string, f Filter) (*Summary, error) {
	files, err := Files(path)
	if err != nil {
		return nil, err
	}
	var rs []io.Reader
	var read []string
	for _, name := range files {
		fh, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // rotated away since it was listed
		}
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		rs = append(rs, fh)
		read = append(read, name)
	}
	if len(read) == 0 {
		return nil, fmt.Errorf("no audit log at %s: %w", path, fs.ErrNotExist)
	}
	s, err := summarize(ctx, rs, f)
	if err != nil {
		return nil, err
	}
	s.Files = read
	return s, nil
}

// summarize sums up the entries of rs, read in order, on every
// processor: one goroutine reads chunks of whole lines, the others parse
// and count them, each into a tally of its own, merged at the end.
func summarize(ctx context.Context, rs []io.Reader, f Filter) (*Summary, error) {
	chunks := make(chan chunk, 2*runtime.GOMAXPROCS(0))
	tallies := make([]*tally, runtime.GOMAXPROCS(0))
	w := f.window()
	var wg sync.WaitGroup
	for i := range tallies {
		t := newTally()
		tallies[i] = t
		// Ends when chunks is closed, below.
		wg.Go(func() {
			for c := range chunks {
				t.chunk(c, &f, w)
			}
		})
	}
	var err error
	for _, r := range rs {
		if err = readChunks(r, chunks); err != nil || ctx.Err() != nil {
			break
		}
	}
	close(chunks)
	wg.Wait()
	if err = cmp.Or(err, ctx.Err()); err != nil {
		return nil, err
	}
	all := newTally()
	for _, t := range tallies {
		all.merge(t)
	}
	return all.summary(), nil
}

// tally counts entries as they are read.
type tally struct {
	rows, clients      map[string]*rowTally
	principals         map[string]*rowTally
	first, last        string
	confirmations      Confirmations
	tasks              Tasks
	dropped            int64
	truncated, foreign int
}

type rowTally struct {
	Row
	durations []float64
	errors    map[errorKey]int
	versions  map[string]bool
}

type errorKey struct {
	outcome string
	code    int64
	hasCode bool
}

func newTally() *tally {
	return &tally{rows: map[string]*rowTally{}, clients: map[string]*rowTally{}, principals: map[string]*rowTally{}, confirmations: Confirmations{Answers: map[string]int{}, Refusals: map[string]int{}},
		tasks: Tasks{Ended: map[string]int{}}}
}

// chunk counts the lines of c.
func (t *tally) chunk(c chunk, f *Filter, w window) {
	data := c.data
	for len(data) > 0 {
		line, rest, found := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			var syntax *jsontext.SyntacticError
			if !found && c.last || line[0] == '{' && (errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF)) {
				t.truncated++
			} else {
				t.foreign++
			}
			continue
		}
		t.entry(&e, f, w)
	}
}

// entry counts one line that parsed.
func (t *tally) entry(e *Entry, f *Filter, w window) {
	switch {
	case e.Kind == KindDropped:
		t.dropped += e.Dropped
		return
	case e.Kind == "" || e.Name == "" || !canonicalTime(e):
		t.foreign++
		return
	case !f.match(e, w):
		return
	case e.Kind == KindTask:
		if e.Outcome == TaskCreated {
			t.tasks.Created++
		} else {
			t.tasks.Ended[cmp.Or(e.Outcome, "unknown")]++
		}
		return
	}
	if t.first == "" || e.Time < t.first {
		t.first = e.Time
	}
	t.last = max(t.last, e.Time)
	switch {
	case e.Refusal != "":
		t.confirmations.Refusals[e.Refusal]++
	case e.Confirmation != "":
		t.confirmations.Asked++
		t.confirmations.Answers[cmp.Or(e.Answer, "none")]++
	}
	t.row(t.rows, e.Kind+"\x00"+e.Name, e.Name, e).Kind = e.Kind
	if c := t.row(t.clients, e.Client, cmp.Or(e.Client, "(unnamed)"), e); e.ClientVersion != "" {
		c.versions[e.ClientVersion] = true
	}
	t.row(t.principals, e.Principal, cmp.Or(e.Principal, "(unknown)"), e)
}

// canonicalTime reports whether e's time is in the layout Timestamp
// writes, which compares as a string. A time in another RFC 3339 form is
// rewritten in it; anything else is not an entry's.
func canonicalTime(e *Entry) bool {
	if len(e.Time) == len(timeLayout) && e.Time[10] == 'T' && e.Time[len(e.Time)-1] == 'Z' {
		return true
	}
	t, err := time.Parse(time.RFC3339Nano, e.Time)
	if err != nil {
		return false
	}
	e.Time = Timestamp(t)
	return true
}

// row counts e in the row of m at key, named name.
func (t *tally) row(m map[string]*rowTally, key, name string, e *Entry) *rowTally {
	r := m[key]
	if r == nil {
		r = &rowTally{Row: Row{Name: name}, errors: map[errorKey]int{}, versions: map[string]bool{}}
		m[key] = r
	}
	r.Calls++
	if e.Outcome != OutcomeOK {
		k := errorKey{outcome: cmp.Or(e.Outcome, "unknown")}
		if e.Code != nil {
			k.code, k.hasCode = *e.Code, true
		}
		r.errors[k]++
	}
	if e.Confirmation != "" && e.Refusal == "" {
		r.Asked++
		if e.Answer != "accept" {
			r.Refused++
		}
	}
	r.durations = append(r.durations, e.Duration)
	r.BytesIn += int64(e.BytesIn)
	r.BytesOut += int64(e.BytesOut)
	r.LastUse = max(r.LastUse, e.Time)
	return r
}

func (t *tally) merge(o *tally) {
	for _, pair := range []struct{ into, from map[string]*rowTally }{{t.rows, o.rows}, {t.clients, o.clients}, {t.principals, o.principals}} {
		for k, r := range pair.from {
			into := pair.into[k]
			if into == nil {
				pair.into[k] = r
				continue
			}
			into.Calls += r.Calls
			into.Asked += r.Asked
			into.Refused += r.Refused
			into.BytesIn += r.BytesIn
			into.BytesOut += r.BytesOut
			into.LastUse = max(into.LastUse, r.LastUse)
			into.durations = append(into.durations, r.durations...)
			for ek, n := range r.errors {
				into.errors[ek] += n
			}
			maps.Copy(into.versions, r.versions)
		}
	}
	if o.first != "" && (t.first == "" || o.first < t.first) {
		t.first = o.first
	}
	t.last = max(t.last, o.last)
	t.confirmations.Asked += o.confirmations.Asked
	for a, n := range o.confirmations.Answers {
		t.confirmations.Answers[a] += n
	}
	for r, n := range o.confirmations.Refusals {
		t.confirmations.Refusals[r] += n
	}
	t.tasks.Created += o.tasks.Created
	for how, n := range o.tasks.Ended {
		t.tasks.Ended[how] += n
	}
	t.dropped += o.dropped
	t.truncated += o.truncated
	t.foreign += o.foreign
}

func (t *tally) summary() *Summary {
	s := &Summary{First: t.first, Last: t.last, Confirmations: t.confirmations, Tasks: t.tasks, Dropped: t.dropped, Truncated: t.truncated, Foreign: t.foreign}
	if len(s.Tasks.Ended) == 0 {
		s.Tasks.Ended = nil
	}
	if len(s.Confirmations.Refusals) == 0 {
		s.Confirmations.Refusals = nil
	}
	s.Tools, s.Calls, s.Errors = rows(t.rows)
	s.Clients, _, _ = rows(t.clients)
	s.Principals, _, _ = rows(t.principals)
	return s
}

// rows finishes the rows of m, the most called first, and counts their
// calls and failures.
func rows(m map[string]*rowTally) (out []Row, calls, failed int) {
	out = []Row{}
	for _, r := range m {
		slices.Sort(r.durations)
		r.P50, r.P95, r.Max = percentile(r.durations, 50), percentile(r.durations, 95), r.durations[len(r.durations)-1]
		r.Errors = []ErrorCount{}
		for k, n := range r.errors {
			ec := ErrorCount{Outcome: k.outcome, Count: n}
			if k.hasCode {
				ec.Code = &k.code
			}
			r.Errors = append(r.Errors, ec)
			failed += n
		}
		slices.SortFunc(r.Errors, func(a, b ErrorCount) int {
			return cmp.Or(b.Count-a.Count, cmp.Compare(a.Outcome, b.Outcome), cmp.Compare(codeOf(a), codeOf(b)))
		})
		r.Versions = slices.Sorted(maps.Keys(r.versions))
		out = append(out, r.Row)
		calls += r.Calls
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(b.Calls-a.Calls, cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	return out, calls, failed
}

func codeOf(e ErrorCount) int64 {
	if e.Code == nil {
		return 0
	}
	return *e.Code
}

// percentile returns the p-th percentile of sorted values, by nearest rank.
func percentile(sorted []float64, p int) float64 {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}
