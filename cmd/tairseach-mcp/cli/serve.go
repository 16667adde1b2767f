package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// runServe serves MCP on the env's stdin and stdout until stdin ends or
// ctx is cancelled (a signal). stdout carries protocol messages only.
func runServe(ctx context.Context, e *env, opts *options) error {
	if opts.confirmPage && opts.transport != "http" && opts.ui == "" {
		return usageError{errors.New("--confirm-unsupported page waits for the owner's answer on the console: serve one with --transport http (at /ui) or, over stdio, --ui 127.0.0.1:0")}
	}
	log, flushLog := newLogger(e.stderr, opts.logLevel, opts.logFormat)
	defer flushLog()
	// A client that closes the bridge's stdout then ends the session
	// through the failed write (calls cancelled, the reason logged, exit
	// status 1) instead of by SIGPIPE on the spot.
	signal.Ignore(syscall.SIGPIPE)
	held := opts.maxHeldBytes
	if opts.transport == "http" {
		held = opts.http.maxTotalHeld
	}
	if _, set := e.getenv("GOMEMLIMIT"); !set {
		// The budget bounds what the bridge holds; this tells the garbage
		// collector to work before the heap outgrows it by much, instead
		// of letting it double between collections.
		debug.SetMemoryLimit(memoryLimit(held))
	}
	backend := newBackend(opts, &log)
	defer backend.Close()

	srv := newServer(opts, &log, e.hurry)
	rec, closeAudit := openAudit(opts.audit, &log)
	defer closeAudit()
	var obs *consoleObserver // the console's, made once the registry is
	if opts.transport == "http" || opts.ui != "" {
		obs = &consoleObserver{}
	}
	reg := newObservedRegistry(opts, backend, &log, srv, rec, obs.observer())
	srv.Tools = toolProvider(opts, reg)
	if s, ok := srv.Tools.(*registry.Search); ok && opts.searchLearn && opts.audit.path != "" {
		if err := s.Learn(opts.audit.path); err != nil {
			log.Warn().Err(err).Str("audit_log", opts.audit.path).Msg("search mode cannot learn from the audit log's past calls")
		}
	}
	srv.Resources, srv.Prompts, srv.Completions = reg, reg, reg
	srv.Refused, srv.TaskRecorded = reg.RecordRefusal, reg.RecordTask
	named, err := openClients(opts, &log, srv, reg, obs)
	if err != nil {
		return err
	}
	con := newConsole(opts, &log, srv, reg, backend, named, obs)
	stopUI, err := serveUI(e, opts, &log, con) // over stdio, with --ui
	if err != nil {
		return err
	}
	defer stopUI()

	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(context.Background())
	serveCtx, endSession := context.WithCancel(ctx) // ends a stdio session whose client is removed
	defer endSession()
	if named != nil {
		named.end = endSession
		// This goroutine follows the clients file until Serve returns.
		wg.Go(func() { named.watch(watchCtx) })
	}
	wg.Add(1)
	// This goroutine reports the first load, then watches the manifests
	// until Serve returns; stopWatch ends it. A session that ended before
	// the load was done still waits for it, so its problems are reported.
	go func() {
		defer wg.Done()
		<-reg.Loaded()
		snap := reg.Snapshot()
		logSummary(&log, snap)
		log.Info().Str("version", version()).Int("tools", snap.Tools().Len()).Str("tool_mode", opts.toolMode).Str("socket", opts.socket).
			Strs("manifests", opts.manifests).Bool("watch", !opts.noWatch).Str("transport", opts.transport).Msg("serving")
		if watchCtx.Err() != nil {
			return
		}
		checkBackend(watchCtx, &log, backend)
		if opts.noWatch {
			return
		}
		if err := reg.Watch(watchCtx); err != nil {
			log.Error().Err(err).Msg("cannot watch manifests; changes need a restart")
		}
	}()
	if opts.transport == "http" {
		hard, cancel := context.WithCancel(context.Background())
		stopHurry := context.AfterFunc(ctx, func() { // a second signal ends the grace period
			select {
			case <-e.hurry:
				cancel()
			case <-hard.Done():
			}
		})
		err = serveHTTP(ctx, hard, e, opts, &log, srv, reg, backend, named, con)
		stopHurry()
		cancel()
	} else {
		if isTerminal(e.stdin) {
			// Someone ran the bridge by hand; MCP clients start it with pipes.
			fmt.Fprintln(e.stderr, "tairseach-mcp serves MCP on stdin/stdout: type JSON-RPC requests, one per line, or press Ctrl-D to quit.\nTry: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}   (tairseach-mcp --help for more)")
		}
		if named != nil {
			err = srv.ServeSession(serveCtx, e.stdin, e.stdout, named.session())
		} else {
			err = srv.Serve(ctx, e.stdin, e.stdout)
		}
	}
	stopWatch()
	wg.Wait()
	var ue usageError
	if errors.As(err, &ue) {
		return err // said by run, with the usage hint
	}
	if err != nil {
		log.Error().Err(err).Msg("session ended")
		return exitStatus(exitError)
	}
	log.Debug().Msg("session ended")
	return nil
}

// newServer returns the protocol server the options describe, without
// its tools.
func newServer(opts *options, log *zerolog.Logger, hurry <-chan struct{}) *protocol.Server {
	srv := &protocol.Server{
		Info:         serverInfo(),
		Instructions: opts.instructions,
		Logger:       log,
		ListChanged:  !opts.noWatch && opts.toolMode != "search", // the search tools never change
		// Resources and prompts are served as they are in either mode.
		ResourcesListChanged: !opts.noWatch,
		PromptsListChanged:   !opts.noWatch,
		MaxMessageSize:       opts.maxMessageSize,
		MaxMessageSizeHint:   maxMessageSizeHint,
		MaxInFlight:          opts.maxInFlight,
		MaxHeldBytes:         opts.maxHeldBytes,
		AskTimeout:           opts.askTimeout,
		MaxPendingAsks:       cmp.Or(opts.maxPendingAsks, max(1, opts.poolSize/2)),
		MaxTasks:             opts.tasks.max,
		MaxTasksPerOwner:     opts.tasks.maxPerOwner,
		MaxTaskTTL:           opts.tasks.maxTTL,
		MaxTaskBytes:         opts.tasks.maxBytes,
		Hurry:                hurry,
	}
	if opts.transport == "http" {
		srv.MaxTotalInFlight, srv.MaxTotalHeldBytes = opts.http.maxTotalInFlight, opts.http.maxTotalHeld
	}
	srv.ProgressInterval = opts.progress
	if opts.progress == 0 {
		srv.ProgressInterval = -1 // off
	}
	return srv
}

// memoryLimit is the Go runtime's soft memory limit for a bridge whose
// budget is held bytes: twice that, for the copies a message makes on
// its way, and room for the rest of the process.
func memoryLimit(held int) int64 { return 2*int64(held) + 64<<20 }

// serverInfo names the server to clients.
func serverInfo() protocol.Implementation {
	return protocol.Implementation{Name: "tairseach-mcp", Title: "Tairseach", Version: version()}
}

func newBackend(opts *options, log *zerolog.Logger) *socketclient.Client {
	return socketclient.New(opts.socket, &socketclient.Options{
		PoolSize:     opts.poolSize,
		MaxReplySize: opts.maxReplySize,
		AllowAnyPeer: opts.allowAnyPeer,
		Logger:       log,
	})
}

// checkBackend logs one warning when the backend cannot be reached at
// start: serving goes on (tools are listed, and calls say what is wrong
// until the backend runs), but whoever reads the log learns it at once.
func checkBackend(ctx context.Context, log *zerolog.Logger, backend *socketclient.Client) {
	// Check is bounded by the client's dial timeout.
	switch err := backend.Check(ctx); {
	case err == nil || ctx.Err() != nil:
	case errors.Is(err, socketclient.ErrBusy):
		log.Warn().Err(err).Str("socket", backend.Path()).Msg("backend busy; serving anyway, calls fail while it accepts no connections")
	default:
		log.Warn().Err(err).Str("socket", backend.Path()).Msg("backend not reachable; serving anyway, calls fail until it runs")
	}
}

// newRegistry loads the manifests, logging to log (nil: nowhere). When
// srv is set, problems and backend trouble are also sent to its clients
// that asked for log messages, and tool list changes are announced. When
// rec is set, calls are recorded there.
func newRegistry(opts *options, backend registry.Caller, log *zerolog.Logger, srv *protocol.Server, rec registry.Recorder) *registry.Registry {
	return newObservedRegistry(opts, backend, log, srv, rec, nil)
}

// newObservedRegistry is newRegistry whose calls obs, when set, is told
// of as they start and end.
func newObservedRegistry(opts *options, backend registry.Caller, log *zerolog.Logger, srv *protocol.Server, rec registry.Recorder, obs registry.Observer) *registry.Registry {
	ro := registry.Options{
		Observe:     obs,
		Dirs:        opts.manifests,
		Prefix:      opts.prefix,
		Filter:      opts.filter(),
		Confirm:     opts.confirmPolicy,
		Backend:     backend,
		Connections: opts.poolSize,
		BackendAddr: opts.socket,
		CallTimeout: opts.callTimeout,
		TaskTimeout: opts.tasks.timeout,
		Limits:      opts.limits,
		Hints:       hints,
		Logger:      log,
		Audit:       rec,
		AuditValues: opts.audit.values,
	}
	if srv != nil {
		// Read stdin while the manifests load: a request that needs
		// them (initialize, for its completions capability, and the
		// lists) waits for the first load, and ping, cancellations and
		// 2024-11-05's initialize do not.
		ro.LoadInBackground = true
		ro.Report = func(level zerolog.Level, msg string) { srv.Log(clientLevel(level), "tairseach-mcp", msg) }
		ro.OnChange = func(_ *registry.Snapshot, c registry.Changes) { notifyChanges(srv, c) }
	}
	return registry.New(ro)
}

// hints, and maxMessageSizeHint for the protocol's refusal of a message
// too long, tell a client which flag changes a setting that a message
// names, so that it can tell the person running the bridge.
const maxMessageSizeHint = "raise --max-message-size to accept it"

var hints = registry.Hints{
	Limits: map[string]string{
		"depth":         "set with --max-depth",
		"number length": "set with --max-number-length",
		"size":          "set with --max-checked-size",
		"values":        "set with --max-checked-values",
	},
	Backend: "fix --socket",
}

// notifyChanges tells srv's clients which lists changed; each is a no-op
// unless srv announces that list's changes.
func notifyChanges(srv *protocol.Server, c registry.Changes) {
	if c.Tools {
		srv.NotifyToolsChanged()
	}
	if c.Resources {
		srv.NotifyResourcesChanged()
	}
	if c.Prompts {
		srv.NotifyPromptsChanged()
	}
}

// toolProvider is what clients see of reg in the chosen --tool-mode.
func toolProvider(opts *options, reg *registry.Registry) protocol.ToolProvider {
	if opts.toolMode == "search" {
		return registry.NewSearch(reg)
	}
	return reg
}

// logSummary points at validate when the manifests have problems; each
// was logged as it was found.
func logSummary(log *zerolog.Logger, snap *registry.Snapshot) {
	if errs, warns := countProblems(snap.Problems); errs+warns > 0 {
		log.Warn().Int("errors", errs).Int("warnings", warns).Msg("manifest problems; run 'tairseach-mcp validate' for the list")
	}
}

// countProblems counts errors, and warnings: every other problem.
func countProblems(ps []manifest.Problem) (errs, warns int) {
	for _, p := range ps {
		if p.Severity == manifest.Error {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}
