// Package registry holds the table of tools the bridge serves: immutable
// snapshots built from manifest files (client name → manifest tool,
// backend method, compiled schemas), swapped atomically when the files
// change. It validates arguments, calls the backend and maps every outcome
// to a tool result. It knows nothing of stdio or framing.
package registry

import (
	"cmp"
	"context"
	"crypto/sha256"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// DefaultCallTimeout bounds one backend call: below the 60 s after which
// Claude Desktop gives up on a request, so the model gets our explanation
// rather than a bare timeout.
const DefaultCallTimeout = 50 * time.Second

// DefaultTaskTimeout bounds the backend call of a task, which outlives
// its request: an import or a sync may take that long.
const DefaultTaskTimeout = time.Hour

// Caller is what the registry needs from a backend: one JSON-RPC call,
// bounded by ctx. socketclient.Client implements it. The result, and an
// RPCError's message and data, are valid JSON in UTF-8 (the client
// replaces invalid bytes): they go to clients as they are. Errors are
// classified with the socketclient error values (RPCError,
// ErrUnavailable, ErrBadReply).
type Caller interface {
	// Call calls method with params on behalf of call, the client's
	// request, with which the reply is counted as it is read.
	Call(ctx context.Context, method string, params jsontext.Value, call socketclient.Call) (jsontext.Value, error)
}

// Options configures a Registry. The zero value of each field means its default.
type Options struct {
	// Dirs are the manifest folders, read recursively.
	Dirs []string
	// Prefix is prepended to client names as <prefix>_<name>; "" adds none.
	Prefix string
	// Filter decides which tools clients see; the zero value serves all.
	Filter Filter
	// Confirm decides which tools ask the user before they run; the zero
	// value asks before destructive ones.
	Confirm Confirm
	// Backend runs the tools. Required for CallTool.
	Backend Caller
	// Connections is how many backend calls run at once: the socket
	// client's connections, shared fairly among the principals that call
	// (see protocol.FairShare; default socketclient.DefaultPoolSize).
	Connections int
	// BackendAddr names the backend in messages to the model (the socket path).
	BackendAddr string
	// CallTimeout bounds one call, its checks and the backend's answer
	// (default DefaultCallTimeout).
	CallTimeout time.Duration
	// TaskTimeout bounds the same for a call that runs as a task, or may
	// become one (protocol.Call.InTask; default DefaultTaskTimeout).
	TaskTimeout time.Duration
	// Limits bound the arguments and results checked against a schema
	// (zero fields: manifest's defaults).
	Limits manifest.Limits
	// Hints complete messages to a model with how a person changes a
	// setting they name; none by default.
	Hints Hints
	// Logger receives logs; nil means none.
	Logger *zerolog.Logger
	// Report, when set, also receives manifest problems, e.g. to forward
	// them to clients as log messages. (Trouble during a call goes to the
	// client that made it, through its protocol.Call.) It must not block.
	Report func(level zerolog.Level, msg string)
	// OnChange, when set, is called after a reload changed what a client
	// sees, with the new snapshot and what changed. Calls are serialised,
	// under the lock of reloads: it must not call Reload.
	OnChange func(*Snapshot, Changes)
	// Debounce is how long the watcher waits for events to stop before it
	// reloads (default 100 ms).
	Debounce time.Duration
	// Audit, when set, records every call; AuditValues adds the
	// arguments' values to each record, secrets redacted (see
	// audit.Values).
	Audit       Recorder
	AuditValues bool
	// Observe, when set, is told of each call (a tools/call, a
	// resources/read, a prompts/get) as it starts and as it ends, with
	// the entry the audit log gets, whether or not there is one: the
	// owner's console shows calls live.
	Observe Observer
	// LoadInBackground makes New return at once and load the manifests
	// in a goroutine; Tools, CallTool and the other providers' methods
	// wait until the first load is done. A server uses it to read
	// requests while it loads.
	LoadInBackground bool
}

// Hints complete messages to a model about what only the person running
// the bridge can change: a command line words them with its flags, so
// that the model can pass them on. An empty hint is left out.
type Hints struct {
	// Limits maps each of the manifest.Limits, by the name a
	// manifest.LimitError gives it ("depth", "number length", "size",
	// "values"), to how it is raised, such as "set with --max-depth".
	Limits map[string]string
	// Backend says how to point the bridge at another backend, such as
	// "fix --socket".
	Backend string
}

// Registry is the live tool table. It is safe for concurrent use: calls
// read the current snapshot, reloads publish a new one.
type Registry struct {
	opts Options
	log  zerolog.Logger
	snap atomic.Pointer[Snapshot]
	// reload serialises Reload and guards files. It is held while
	// Report and OnChange run, which take the locks of whoever listens
	// (a protocol.Server's, its sessions'): lock order reload, then
	// those; they must never call Reload.
	reload sync.Mutex
	files  map[string]*fileState

	decoder      *manifest.Decoder   // of arguments and results, within opts.Limits
	unasked      sync.Map            // manifest tool names logged as running unconfirmed
	largeChecks  chan struct{}       // a slot per processor for checks of large values
	connections  *protocol.FairShare // the backend calls running, by principal
	loaded       chan struct{}       // closed when the first load is done
	walkProblems []manifest.Problem  // found walking the folders at the last reload
	now          func() time.Time    // the clock that says which files changed recently
	// did counts the files the last reload read and parsed, for its log
	// line (and the tests).
	did struct{ read, parsed int }
	// onRecord, when set, is told of each tool call's audit entry before
	// the audit log has it: search mode learns from them.
	onRecord atomic.Pointer[func(*audit.Entry)]
}

// Observer is told of the calls as they start and end. Its methods are
// called on the calls' goroutines, and must not block.
type Observer interface {
	// CallStarted says that call started asking for kind (audit.KindTool,
	// audit.KindResource, audit.KindPrompt) name, at. A call may start
	// again under another name before it ends: search mode's call_tool
	// starts the tool it runs.
	CallStarted(call *protocol.Call, kind, name string, at time.Time)
	// CallEnded says that call ended, with its record: the audit log's
	// entry, its text made safe (audit.Entry.Clean), without the ID and
	// PID the log's writer adds. The entry is the observer's. A call the
	// server refused itself (Registry.RecordRefusal) ends without having
	// started.
	CallEnded(call *protocol.Call, e *audit.Entry)
}

// Changes says which of the lists clients see a reload changed.
type Changes struct {
	Tools     bool
	Resources bool // the resources or the resource templates
	Prompts   bool
}

// fileState remembers one manifest file between reloads.
type fileState struct {
	// id is what the system said of the file just before it was last
	// read, valid when hasID: a file whose id did not change is not read
	// again (see current).
	id    fileID
	hasID bool
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

// holds reports whether st is of a file whose contents, as last parsed,
// have this sum; a nil st holds nothing.
func (st *fileState) holds(sum [sha256.Size]byte) bool {
	return st != nil && st.hasSum && st.sum == sum
}

// A fileID is what the system says of a file without reading it: which
// file it is (device and inode), its size, and when its contents
// (mtime) and its inode (ctime) last changed. Writing to a file,
// truncating it, or renaming another over it changes one of them.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds since 1970
}

// recent is how long after a file last changed it is read at every
// reload whatever its fileID says: a file system keeps times to the tick
// of its clock (a few milliseconds; 2 s on FAT), so a file written twice
// within one tick, at the same size, has the same fileID both times.
const recent = 2 * time.Second

// current reports whether st is of a file that id, said of it at now,
// shows unchanged since it was last read: the same fileID, which was not
// recent at now. A nil st is current for no file.
func (st *fileState) current(id fileID, now time.Time) bool {
	return st != nil && st.hasID && st.id == id && now.Sub(time.Unix(0, max(id.mtime, id.ctime))) >= recent
}

// New returns a registry with the manifests under opts.Dirs loaded. It
// never fails: problems are in Snapshot().Problems and are logged.
func New(opts Options) *Registry {
	r := &Registry{opts: opts, files: map[string]*fileState{}, loaded: make(chan struct{}), decoder: opts.Limits.Decoder(),
		largeChecks: make(chan struct{}, runtime.GOMAXPROCS(0)), now: time.Now}
	r.connections = protocol.NewFairShare(cmp.Or(opts.Connections, socketclient.DefaultPoolSize), nil)
	if opts.Logger != nil {
		r.log = *opts.Logger
	} else {
		r.log = zerolog.Nop()
	}
	if r.opts.CallTimeout <= 0 {
		r.opts.CallTimeout = DefaultCallTimeout
	}
	if r.opts.TaskTimeout <= 0 {
		r.opts.TaskTimeout = DefaultTaskTimeout
	}
	if r.opts.Debounce <= 0 {
		r.opts.Debounce = 100 * time.Millisecond
	}
	r.snap.Store(build(r.rules(), nil, nil))
	load := func() {
		r.Reload()
		close(r.loaded)
	}
	if opts.LoadInBackground {
		// The first load runs on its own; it ends when the load is done,
		// which Loaded reports.
		go load()
	} else {
		load()
	}
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
// returns it. A file is read again only when the system says it changed
// (its device, inode, size, modification or change time), or when it
// changed within the last 2 s (see recent), and parsed again only when
// its contents changed. New problems (from files that changed, or naming
// conflicts that appeared) are logged and reported once.
func (r *Registry) Reload() *Snapshot {
	r.reload.Lock()
	defer r.reload.Unlock()
	start := time.Now()
	scan := r.scan()
	same := r.unchanged(scan)
	fresh := r.parse(scan)
	if same {
		r.log.Debug().Int("files", len(scan.files)).Int("read", r.did.read).Dur("dur", time.Since(start)).Msg("manifests unchanged")
		return r.snap.Load()
	}
	ms, problems := r.merge(scan)
	next, changed := r.publish(ms, problems, fresh)
	r.log.Debug().Int("tools", next.tools.Len()).Int("resources", len(next.Resources)+len(next.Templates)).Int("prompts", len(next.Prompts)).
		Int("files", len(scan.files)).Int("read", r.did.read).Int("parsed", r.did.parsed).Bool("changed", changed).
		Dur("dur", time.Since(start)).Msg("manifests loaded")
	return next
}

// scanned is what a reload found on disk: every manifest file, kept as
// it was or with its contents (or why it could not be read), and the
// problems met walking the folders.
type scanned struct {
	files        []scannedFile
	walkProblems []manifest.Problem
}

type scannedFile struct {
	path string
	// kept is true when the file is current (see fileState.current): it
	// was not read, and its state stands.
	kept bool
	// id is what the system said of the file before it was read, valid
	// when hasID.
	id      fileID
	hasID   bool
	data    []byte
	sum     [sha256.Size]byte
	readErr error
}

// scan walks the manifest folders and reads every manifest file that is
// not current, on every processor.
func (r *Registry) scan() scanned {
	paths, walkProblems := manifest.Files(r.opts.Dirs...)
	now := r.now()
	s := scanned{files: make([]scannedFile, len(paths)), walkProblems: walkProblems}
	inParallel(len(paths), func(i int) {
		f := &s.files[i]
		f.path = paths[i]
		// Said before the read: a change during the read shows next time.
		f.id, f.hasID = statFile(f.path)
		if f.kept = f.hasID && r.files[f.path].current(f.id, now); f.kept {
			return
		}
		if f.data, f.readErr = manifest.ReadData(f.path); f.readErr == nil {
			f.sum = sha256.Sum256(f.data)
		}
	})
	r.did.read = 0
	for _, f := range s.files {
		if !f.kept {
			r.did.read++
		}
	}
	return s
}

// inParallel calls f(i) for every i below n, on a worker per processor
// that takes the next i in turn, and returns when all calls are done.
// Workers, not a goroutine per call: a goroutine starts with a small
// stack, and the schema library's recursion grows a parse's stack deep,
// a copy at each doubling.
func inParallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		// A worker ends when no i is left; inParallel waits for it.
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// unchanged reports whether a scan found exactly what the last reload
// did: the same files, all readable, with the same contents, and the same
// problems walking the folders. Then the current snapshot stands as it is.
func (r *Registry) unchanged(s scanned) bool {
	if len(s.files) != len(r.files) || !slices.Equal(s.walkProblems, r.walkProblems) {
		return false
	}
	for _, f := range s.files {
		if !f.kept && (f.readErr != nil || !r.files[f.path].holds(f.sum)) {
			return false
		}
	}
	return true
}

// parse parses the files whose contents changed since the last reload and
// records each file's state; it returns the problems that are new, the
// folders' included.
func (r *Registry) parse(s scanned) (fresh []manifest.Problem) {
	fresh = notIn(s.walkProblems, r.walkProblems)
	r.walkProblems = s.walkProblems
	// Parsing compiles every schema, most of a load's work: files are
	// parsed on every processor.
	type result struct {
		m        *manifest.Manifest
		problems []manifest.Problem
	}
	results := make([]result, len(s.files))
	inParallel(len(s.files), func(i int) {
		if f := &s.files[i]; !f.kept && f.readErr == nil && !r.files[f.path].holds(f.sum) {
			results[i].m, results[i].problems = manifest.Parse(f.path, f.data)
		}
	})
	r.did.parsed = 0
	files := make(map[string]*fileState, len(s.files))
	for i, f := range s.files {
		st := r.files[f.path]
		if st == nil {
			st = &fileState{}
		}
		files[f.path] = st
		switch {
		case f.kept: // as it was
		case f.readErr != nil:
			// Vanished between the walk and the read, unreadable, or not
			// a regular file: treat like a parse failure so last good
			// tools stay.
			pr := manifest.ReadProblem(f.path, f.readErr)
			if len(st.problems) != 1 || st.problems[0] != pr {
				fresh = append(fresh, pr)
			}
			st.hasID, st.hasSum, st.parsed, st.problems = false, false, nil, []manifest.Problem{pr}
		case st.holds(f.sum):
			// Read again (touched, or recent) and the same: not parsed.
			st.id, st.hasID = f.id, f.hasID
		default:
			r.did.parsed++
			st.id, st.hasID = f.id, f.hasID
			m, problems := results[i].m, results[i].problems
			st.sum, st.hasSum, st.parsed, st.problems = f.sum, true, m, problems
			if m != nil && !manifest.HasErrors(problems) {
				st.lastGood = m
			}
			fresh = append(fresh, problems...)
			if manifest.HasErrors(problems) && st.lastGood != nil && st.lastGood != m {
				fresh = append(fresh, manifest.Problem{File: f.path, Severity: manifest.Warning,
					Message: "keeping the tools of the last good version until the errors are fixed"})
			}
		}
	}
	r.files = files // a removed file is left out: its tools go away
	return fresh
}

// merge returns the manifests to serve, in file order (a file with errors
// is served as its last good version, when it had one), and every
// problem of the files as they are now.
func (r *Registry) merge(s scanned) (ms []*manifest.Manifest, problems []manifest.Problem) {
	problems = slices.Clone(s.walkProblems)
	for _, f := range s.files {
		st := r.files[f.path]
		problems = append(problems, st.problems...)
		switch {
		case manifest.HasErrors(st.problems) && st.lastGood != nil:
			ms = append(ms, st.lastGood)
		case st.parsed != nil:
			ms = append(ms, st.parsed)
		}
	}
	return ms, problems
}

// publish builds the snapshot of ms, stores it, logs and reports the
// problems that are new, and tells OnChange when what clients see changed.
func (r *Registry) publish(ms []*manifest.Manifest, problems, fresh []manifest.Problem) (next *Snapshot, changed bool) {
	old := r.snap.Load()
	next = build(r.rules(), ms, nil)
	next.Problems = slices.Concat(problems, next.naming)
	fresh = append(fresh, notIn(next.naming, old.Problems)...)
	// Most real manifests use dotted names, so renames are routine:
	// validate lists them, the log only at debug level. Folded duplicates
	// are routine too (a core file and an integrations file), but change
	// what a reader of the manifests expects: info.
	for _, pr := range notIn(next.renames, old.renames) {
		about(r.log.Debug(), pr).Msg(pr.Message)
	}
	for _, u := range notIn(next.Unserved, old.Unserved) {
		if u.Folded {
			r.log.Info().Str("manifest", u.File).Str("tool", u.Tool).Msg(u.Reason)
		}
	}
	// An unchanged list keeps its old set: clients' pagination cursors
	// stay valid.
	var c Changes
	if c.Tools = !next.tools.Equal(old.tools); !c.Tools {
		next.tools = old.tools
	}
	if c.Resources = !next.resources.Equal(old.resources); !c.Resources {
		next.resources = old.resources
	}
	if c.Prompts = !next.prompts.Equal(old.prompts); !c.Prompts {
		next.prompts = old.prompts
	}
	changed = c != Changes{}
	r.snap.Store(next)
	r.logProblems(fresh)
	select {
	case <-r.loaded:
		if changed && r.opts.OnChange != nil {
			r.opts.OnChange(next, c)
		}
	default:
		// The first load: nobody has seen a list yet, so nothing changed for anyone.
	}
	return next, changed
}

// notIn returns the elements of xs that old does not hold, in order. A
// large set renames every tool: comparing each with every old one made a
// reload quadratic in the tools.
func notIn[T comparable](xs, old []T) []T {
	if len(xs) == 0 {
		return nil
	}
	had := make(map[T]bool, len(old))
	for _, x := range old {
		had[x] = true
	}
	var out []T
	for _, x := range xs {
		if !had[x] {
			out = append(out, x)
		}
	}
	return out
}

// logProblems logs each new problem: errors at error level, warnings at
// warn, and reports them to the client when asked to.
func (r *Registry) logProblems(ps []manifest.Problem) {
	for _, p := range ps {
		level := zerolog.WarnLevel
		if p.Severity == manifest.Error {
			level = zerolog.ErrorLevel
		}
		about(r.log.WithLevel(level), p).Str("path", p.Path).Msg(p.Message)
		if r.opts.Report != nil {
			r.opts.Report(level, p.String())
		}
	}
}

// about adds to a log event the file a problem is in and the item it is
// about.
func about(ev *zerolog.Event, p manifest.Problem) *zerolog.Event {
	ev = ev.Str("manifest", p.File)
	switch {
	case p.Tool != "":
		ev = ev.Str("tool", p.Tool)
	case p.Resource != "":
		ev = ev.Str("resource", p.Resource)
	case p.Prompt != "":
		ev = ev.Str("prompt", p.Prompt)
	}
	return ev
}
