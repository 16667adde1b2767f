package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// shutdownGrace bounds how long requests in flight may finish after
// SIGINT or SIGTERM.
const shutdownGrace = 5 * time.Second

// options are the command-line settings. Paths may start with ~/.
type options struct {
	socket    string
	dataDir   string
	filesRoot string
	logLevel  string
}

// mainExit runs the command and returns its exit code: 0 after a clean
// shutdown (or -h), 1 on an error, 2 on bad flags.
func mainExit(args []string, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	log := newLogger(stderr, opts.logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, log, shutdownGrace); err != nil {
		log.Error().Err(err).Msg("exiting")
		return 1
	}
	return 0
}

// parseFlags reads the command line. Errors (and -h) are printed to
// stderr by the flag package or here.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("tairseach-example-backend", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tairseach-example-backend [flags]\n\nServes the example Tairseach methods as JSON-RPC 2.0 on a Unix socket.\n\nFlags:")
		fs.PrintDefaults()
	}
	var o options
	fs.StringVar(&o.socket, "socket", "~/.tairseach/tairseach.sock", "Unix socket to listen on (its folder is created, mode 0700)")
	fs.StringVar(&o.dataDir, "data", "~/.tairseach/example-data", "folder where notes are stored")
	fs.StringVar(&o.filesRoot, "files-root", "~", "folder that files.list shows; nothing outside it is reachable")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: trace, debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q", fs.Arg(0))
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return nil, err
	}
	if _, err := parseLevel(o.logLevel); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, err
	}
	for _, p := range []*string{&o.socket, &o.dataDir, &o.filesRoot} {
		var err error
		if *p, err = expandHome(*p); err != nil {
			fmt.Fprintln(stderr, err)
			return nil, err
		}
	}
	return &o, nil
}

// run serves until ctx is done, then shuts down within grace.
func run(ctx context.Context, o *options, log zerolog.Logger, grace time.Duration) error {
	if err := os.MkdirAll(filepath.Dir(o.socket), 0o700); err != nil {
		return fmt.Errorf("create socket folder: %w", err)
	}
	b, err := newBackend(o.dataDir, o.filesRoot, log)
	if err != nil {
		return err
	}
	s, err := listen(o.socket, &dispatcher{methods: b.methods(), log: log}, log)
	if err != nil {
		return err
	}
	log.Info().Str("socket", o.socket).Str("data", o.dataDir).Str("files_root", b.files.root).Msg("listening")
	err = s.serve(ctx, grace)
	log.Info().Msg("stopped")
	return err
}

func parseLevel(s string) (zerolog.Level, error) {
	switch s {
	case "trace", "debug", "info", "warn", "error":
		return zerolog.ParseLevel(s)
	}
	return zerolog.NoLevel, fmt.Errorf("unknown log level %q: use trace, debug, info, warn or error", s)
}

// newLogger builds the only logger: to w (stderr), as console text when w
// is a terminal and as JSON lines otherwise.
func newLogger(w io.Writer, level string) zerolog.Logger {
	lvl, err := parseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
		}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// expandHome replaces a leading ~ with the user's home folder, for paths
// given where no shell expands them (defaults, launcher configs).
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", p, err)
	}
	return filepath.Join(home, p[1:]), nil
}
