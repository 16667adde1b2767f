package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// gcPercent is the bridge's default GOGC.
const gcPercent = 50

// runServe serves MCP on the env's stdin and stdout until stdin ends or
// ctx is cancelled (a signal). stdout carries protocol messages only.
func runServe(ctx context.Context, e *env, opts *options) error {
	log := newLogger(e.stderr, opts.logLevel, opts.logFormat)
	// A client that closes the bridge's stdout then ends the session
	// through the failed write (calls cancelled, stdin restored, the
	// reason logged, exit status 1) instead of by SIGPIPE on the spot.
	signal.Ignore(syscall.SIGPIPE)
	if os.Getenv("GOGC") == "" {
		// The bridge allocates little per call, so collecting at half the
		// default heap growth costs about 1 µs of CPU per call and keeps
		// it some 2.5 MiB smaller (scripts/bench); GOGC still overrides.
		debug.SetGCPercent(gcPercent)
	}
	if opts.cpuProfile != "" {
		f, err := os.Create(opts.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	backend := newBackend(opts, &log)
	defer backend.Close()

	srv := &protocol.Server{
		Info:           protocol.Implementation{Name: "tairseach-mcp", Title: "Tairseach", Version: version()},
		Instructions:   opts.instructions,
		Logger:         &log,
		ListChanged:    !opts.noWatch,
		MaxMessageSize: opts.maxMessageSize,
		MaxInFlight:    opts.maxInFlight,
	}
	srv.ProgressInterval = opts.progress
	if opts.progress == 0 {
		srv.ProgressInterval = -1 // off
	}
	// The bridge loads manifests on every processor and serves on one
	// (see below, when serveOnOne is set).
	var serveOnOne atomic.Bool
	reg := newRegistry(opts, backend, &log, srv, reloadOnEveryProcessor(runtime.GOMAXPROCS(0), &serveOnOne))
	srv.Tools = reg

	in, pollable := e.stdin, false
	if f, ok := in.(*os.File); ok {
		var shared []*os.File
		for _, w := range []io.Writer{e.stdout, e.stderr} {
			if o, ok := w.(*os.File); ok {
				shared = append(shared, o)
			}
		}
		var done func()
		in, done, pollable = pollableInput(f, shared...)
		defer done()
	}

	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(context.Background())
	wg.Add(1)
	// This goroutine reports the first load, then watches the manifests
	// until Serve returns; stopWatch ends it.
	go func() {
		defer wg.Done()
		select {
		case <-reg.Loaded():
		case <-watchCtx.Done():
			return
		}
		if _, set := e.getenv("GOMAXPROCS"); !set && pollable {
			// Serving is a few µs of work per call between system calls:
			// one processor does it with less CPU and latency than two,
			// whose goroutines wake each other's threads (see the README's
			// Performance). Not with a blocking stdin, whose read would
			// hold the one processor; and the first load, CPU-bound and
			// parallel, keeps every processor.
			runtime.GOMAXPROCS(1)
			serveOnOne.Store(true)
		}
		snap := reg.Snapshot()
		logSummary(&log, snap)
		log.Info().Str("version", version()).Int("tools", snap.Tools().Len()).Str("socket", opts.socket).
			Strs("manifests", opts.manifests).Bool("watch", !opts.noWatch).Int("processors", runtime.GOMAXPROCS(0)).Msg("serving on stdio")
		if opts.noWatch {
			return
		}
		if err := reg.Watch(watchCtx); err != nil {
			log.Error().Err(err).Msg("cannot watch manifests; changes need a restart")
		}
	}()
	if f, ok := e.stdin.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			// Someone ran the bridge by hand; MCP clients start it with pipes.
			fmt.Fprintln(e.stderr, "tairseach-mcp serves MCP on stdin/stdout: type JSON-RPC requests, one per line, or press Ctrl-D to quit.\nTry: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}   (tairseach-mcp --help for more)")
		}
	}
	if f, ok := e.stdout.(*os.File); ok {
		growPipe(f)
	}
	err := srv.Serve(ctx, in, e.stdout)
	stopWatch()
	wg.Wait()
	if err != nil {
		log.Error().Err(err).Msg("session ended")
		return exitStatus(exitError)
	}
	log.Debug().Msg("session ended")
	return nil
}

// reloadOnEveryProcessor returns the registry's AroundReload: while the
// bridge serves on one processor (serveOnOne), each reload runs on all
// of them (all). A reload of many manifests is milliseconds of work, and
// more of collecting its garbage; on the one processor, calls would wait
// for it, their replies unseen until the scheduler took the processor
// back: up to 39 ms during reloads of 1,000 tools, 10–13 ms with another
// processor serving meanwhile (scripts/bench, three runs each).
func reloadOnEveryProcessor(all int, serveOnOne *atomic.Bool) func(reload func()) {
	return func(reload func()) {
		if serveOnOne.Load() && all > 1 {
			runtime.GOMAXPROCS(all)
			defer runtime.GOMAXPROCS(1)
		}
		reload()
	}
}

func newBackend(opts *options, log *zerolog.Logger) *socketclient.Client {
	return socketclient.New(opts.socket, &socketclient.Options{
		PoolSize:     opts.poolSize,
		MaxReplySize: opts.maxReplySize,
		AllowAnyPeer: opts.allowAnyPeer,
		Logger:       log,
	})
}

// newRegistry loads the manifests. When srv is set, problems and backend
// trouble are also sent to its clients that asked for log messages, and
// tool list changes are announced.
func newRegistry(opts *options, backend registry.Caller, log *zerolog.Logger, srv *protocol.Server, aroundReload func(func())) *registry.Registry {
	ro := registry.Options{
		Dirs:         opts.manifests,
		Prefix:       opts.prefix,
		Backend:      backend,
		BackendAddr:  opts.socket,
		CallTimeout:  opts.callTimeout,
		Logger:       log,
		AroundReload: aroundReload,
	}
	if srv != nil {
		// Answer initialize while the manifests load; tools/list waits.
		ro.LoadInBackground = true
		ro.Report = func(level zerolog.Level, msg string) { srv.Log(clientLevel(level), "tairseach-mcp", msg) }
		ro.OnChange = func(*registry.Snapshot) { srv.NotifyToolsChanged() }
	}
	return registry.New(ro)
}

// logSummary points at validate when the manifests have problems; each
// was logged as it was found.
func logSummary(log *zerolog.Logger, snap *registry.Snapshot) {
	var errs, warns int
	for _, p := range snap.Problems {
		if snap.IsRename(p) {
			continue
		}
		if p.Severity == manifest.Error {
			errs++
		} else {
			warns++
		}
	}
	if errs+warns > 0 {
		log.Warn().Int("errors", errs).Int("warnings", warns).Msg("manifest problems; run 'tairseach-mcp validate' for the list")
	}
}
