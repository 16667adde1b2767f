// Package registry holds the table of tools the bridge serves: immutable
// snapshots built from manifest files (client name → manifest tool,
// backend method, compiled schemas), swapped atomically when the files
// change. It validates arguments, calls the backend and maps every outcome
// to a tool result. It knows nothing of stdio or framing.
package registry

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
)

// DefaultCallTimeout bounds one backend call: below the 60 s after which
// Claude Desktop gives up on a request, so the model gets our explanation
// rather than a bare timeout.
const DefaultCallTimeout = 50 * time.Second

// Caller is what the registry needs from a backend: one JSON-RPC call.
// socketclient.Client implements it. Errors are classified with the
// socketclient error values (RPCError, ErrUnavailable, ErrBadReply).
type Caller interface {
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// A TimedCaller bounds a call by a timeout itself, like a context's
// deadline would (socketclient.Client is one): the registry then gives it
// the call timeout instead of a context with a timer, for each call.
type TimedCaller interface {
	CallWithin(ctx context.Context, timeout time.Duration, method string, params json.RawMessage) (json.RawMessage, error)
}

// Options configures a Registry. The zero value of each field means its default.
type Options struct {
	// Dirs are the manifest folders, read recursively.
	Dirs []string
	// Prefix is prepended to client names as <prefix>_<name>; "" adds none.
	Prefix string
	// Backend runs the tools. Required for CallTool.
	Backend Caller
	// BackendAddr names the backend in messages to the model (the socket path).
	BackendAddr string
	// CallTimeout bounds one backend call (default DefaultCallTimeout).
	CallTimeout time.Duration
	// Logger receives logs; nil means none.
	Logger *zerolog.Logger
	// Report, when set, also receives manifest problems, e.g. to forward
	// them to clients as log messages. (Trouble during a call goes to the
	// client that made it, through protocol.ClientLog.) It must not block.
	Report func(level zerolog.Level, msg string)
	// OnChange, when set, is called after a reload changed the tools a
	// client sees, with the new snapshot. Calls are serialised.
	OnChange func(*Snapshot)
	// Debounce is how long the watcher waits for events to stop before it
	// reloads (default 100 ms).
	Debounce time.Duration
	// LoadInBackground makes New return at once and load the manifests
	// in a goroutine; Tools and CallTool wait until the first load is
	// done. A server uses it to answer initialize while it loads.
	LoadInBackground bool
	// AroundReload, when set, runs each reload that Watch makes: it calls
	// reload, and may arrange how it runs, such as on more processors.
	AroundReload func(reload func())
}

// Registry is the live tool table. It is safe for concurrent use: calls
// read the current snapshot, reloads publish a new one.
type Registry struct {
	opts   Options
	log    zerolog.Logger
	snap   atomic.Pointer[Snapshot]
	reload sync.Mutex // serialises Reload; guards files
	files  map[string]*fileState

	loaded       chan struct{} // closed when the first load is done
	reloads      atomic.Int64  // number of Reload calls, for tests
	watching     chan struct{} // closed once Watch has its watches in place
	watchingOnce sync.Once
	walkProblems []manifest.Problem // found walking the folders at the last reload
}

// fileState remembers one manifest file between reloads.
type fileState struct {
	// sum is the SHA-256 of the contents last parsed, valid when hasSum:
	// a file whose contents did not change is not parsed again, and
	// keeping a sum instead of the bytes keeps a large set's files out of
	// memory.
	sum      [sha256.Size]byte
	hasSum   bool
	parsed   *manifest.Manifest // this version; nil when unusable
	problems []manifest.Problem
	lastGood *manifest.Manifest // newest version without errors
}

// New returns a registry with the manifests under opts.Dirs loaded. It
// never fails: problems are in Snapshot().Problems and are logged.
func New(opts Options) *Registry {
	r := &Registry{opts: opts, files: map[string]*fileState{}, watching: make(chan struct{}), loaded: make(chan struct{})}
	if opts.Logger != nil {
		r.log = *opts.Logger
	} else {
		r.log = zerolog.Nop()
	}
	if r.opts.CallTimeout <= 0 {
		r.opts.CallTimeout = DefaultCallTimeout
	}
	if r.opts.Debounce <= 0 {
		r.opts.Debounce = 100 * time.Millisecond
	}
	r.snap.Store(&Snapshot{byName: map[string]*Entry{}, tools: protocol.NewToolSet(nil)})
	if !opts.LoadInBackground {
		r.Reload()
		close(r.loaded)
		return r
	}
	// The first load runs on its own; it ends when the load is done,
	// which Loaded reports.
	go func() {
		r.Reload()
		close(r.loaded)
	}()
	return r
}

// Loaded returns a channel that is closed once the first load is done.
func (r *Registry) Loaded() <-chan struct{} { return r.loaded }

// Snapshot returns the current tool table. With LoadInBackground it may
// be empty until Loaded is closed.
func (r *Registry) Snapshot() *Snapshot { return r.snap.Load() }

// Tools returns the tools clients see, waiting for the first load; part
// of protocol.ToolProvider.
func (r *Registry) Tools() *protocol.ToolSet {
	<-r.loaded
	return r.snap.Load().tools
}

// Reload re-reads the manifest folders, publishes a new snapshot and
// returns it. Files whose contents did not change are not parsed again.
// New problems (from files that changed, or naming conflicts that
// appeared) are logged and reported once.
func (r *Registry) Reload() *Snapshot {
	r.reload.Lock()
	defer r.reload.Unlock()
	r.reloads.Add(1)

	start := time.Now()
	paths, walkProblems := manifest.Files(r.opts.Dirs...)

	// Read every file; parse the ones whose contents changed, in parallel
	// (decoding and checking them is most of the work of a load).
	jobs := make([]job, len(paths))
	var toParse []*job
	for i, p := range paths {
		j := &jobs[i]
		j.path = p
		j.data, j.readErr = manifest.ReadData(p)
		if j.readErr != nil {
			continue
		}
		j.sum = sha256.Sum256(j.data)
		if st := r.files[p]; st == nil || !st.hasSum || st.sum != j.sum {
			j.changed = true
			toParse = append(toParse, j)
		} else {
			j.data = nil
		}
	}
	if r.unchanged(paths, walkProblems, jobs, toParse) {
		r.log.Debug().Int("files", len(paths)).Dur("dur", time.Since(start)).Msg("manifests unchanged")
		return r.snap.Load()
	}
	r.walkProblems = walkProblems
	workers := runtime.GOMAXPROCS(0)
	select {
	case <-r.loaded:
		// Calls are being served: leave them a processor.
		workers = max(1, workers-1)
	default:
	}
	parallel(len(toParse), workers, func(i int) {
		j := toParse[i]
		j.parsed, j.problems = manifest.Parse(j.path, j.data)
	})

	var fresh []manifest.Problem
	seen := make(map[string]bool, len(paths))
	var ms []*manifest.Manifest
	var fileProblems []manifest.Problem
	for i := range jobs {
		j := &jobs[i]
		p := j.path
		seen[p] = true
		st := r.files[p]
		if st == nil {
			st = &fileState{}
			r.files[p] = st
		}
		switch {
		case j.readErr != nil:
			// Vanished between the walk and the read, unreadable, or not
			// a regular file: treat like a parse failure so last good
			// tools stay.
			pr := manifest.ReadProblem(p, j.readErr)
			if len(st.problems) != 1 || st.problems[0] != pr {
				fresh = append(fresh, pr)
			}
			st.hasSum, st.parsed, st.problems = false, nil, []manifest.Problem{pr}
		case j.changed:
			st.sum, st.hasSum, st.parsed, st.problems = j.sum, true, j.parsed, j.problems
			if j.parsed != nil && !manifest.HasErrors(j.problems) {
				st.lastGood = j.parsed
			}
			fresh = append(fresh, j.problems...)
			if manifest.HasErrors(j.problems) && st.lastGood != nil && st.lastGood != j.parsed {
				fresh = append(fresh, manifest.Problem{File: p, Severity: manifest.Warning,
					Message: "keeping the tools of the last good version until the errors are fixed"})
			}
		}
		fileProblems = append(fileProblems, st.problems...)
		switch {
		case manifest.HasErrors(st.problems) && st.lastGood != nil:
			ms = append(ms, st.lastGood)
		case st.parsed != nil:
			ms = append(ms, st.parsed)
		}
	}
	for p := range r.files {
		if !seen[p] {
			delete(r.files, p) // removed: its tools go away
		}
	}

	old := r.snap.Load()
	next := build(r.opts.Prefix, ms)
	next.Problems = slices.Concat(walkProblems, fileProblems, next.naming, next.renames)
	for _, pr := range slices.Concat(walkProblems, next.naming) {
		if !slices.Contains(old.Problems, pr) {
			fresh = append(fresh, pr)
		}
	}
	// Most real manifests use dotted names, so renames are routine:
	// validate lists them, the log only at debug level.
	for _, pr := range next.renames {
		if !slices.Contains(old.Problems, pr) {
			r.log.Debug().Str("manifest", pr.File).Str("tool", pr.Tool).Msg(pr.Message)
		}
	}
	changed := !next.tools.Equal(old.tools)
	if !changed {
		// Keep the old set: clients' pagination cursors stay valid.
		next.tools = old.tools
	}
	r.snap.Store(next)
	r.logProblems(fresh)
	r.log.Debug().Int("tools", next.tools.Len()).Int("files", len(paths)).Bool("changed", changed).
		Dur("dur", time.Since(start)).Msg("manifests loaded")
	select {
	case <-r.loaded:
	default:
		// The first load: nobody has seen a list yet, so nothing changed for anyone.
		changed = false
	}
	if changed && r.opts.OnChange != nil {
		r.opts.OnChange(next)
	}
	return next
}

// unchanged reports whether a reload found exactly what the last one did:
// the same files, all readable, with the same contents, and the same
// problems walking the folders. Then the current snapshot stands as it is.
func (r *Registry) unchanged(paths []string, walkProblems []manifest.Problem, jobs []job, toParse []*job) bool {
	if len(toParse) > 0 || len(paths) != len(r.files) || !slices.Equal(walkProblems, r.walkProblems) {
		return false
	}
	for i := range jobs {
		if jobs[i].readErr != nil {
			return false
		}
	}
	return true
}

// job is one manifest file during a reload.
type job struct {
	path     string
	data     []byte
	sum      [sha256.Size]byte
	readErr  error
	parsed   *manifest.Manifest
	problems []manifest.Problem
	changed  bool
}

// parallel runs f(0..n-1) on up to workers goroutines and waits for all.
func parallel(n, workers int, f func(i int)) {
	workers = min(n, workers)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		// Each worker takes indexes until none are left; parallel waits for all.
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// logProblems logs each new problem: errors at error level, warnings at
// warn, and reports them to the client when asked to.
func (r *Registry) logProblems(ps []manifest.Problem) {
	for _, p := range ps {
		level := zerolog.WarnLevel
		if p.Severity == manifest.Error {
			level = zerolog.ErrorLevel
		}
		r.log.WithLevel(level).Str("manifest", p.File).Str("path", p.Path).Str("tool", p.Tool).Msg(p.Message)
		if r.opts.Report != nil {
			r.opts.Report(level, p.String())
		}
	}
}
