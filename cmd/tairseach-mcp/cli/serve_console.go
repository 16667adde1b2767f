package cli

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/console"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// resolveUI checks --ui: a loopback address, for a bridge over stdio.
func (o *options) resolveUI() error {
	if o.ui == "" {
		return nil
	}
	if o.transport == "http" {
		return errors.New("--ui serves the console of a bridge over stdio; over HTTP it is at /ui on the listener")
	}
	host, port, err := net.SplitHostPort(o.ui)
	if err != nil || port == "" {
		return fmt.Errorf("--ui %q: want a loopback HOST:PORT, such as 127.0.0.1:0", o.ui)
	}
	if addr, err := netip.ParseAddr(host); err == nil && addr.IsLoopback() || strings.EqualFold(host, "localhost") {
		return nil
	}
	return fmt.Errorf("--ui %s: the console listens on loopback only (127.0.0.1, [::1], localhost)", o.ui)
}

// consoleObserver tells the console, made after the registry, of the
// registry's calls. A nil one observes nothing.
type consoleObserver struct {
	c atomic.Pointer[console.Console]
}

// observer returns o as the registry's observer, nil when o is.
func (o *consoleObserver) observer() registry.Observer {
	if o == nil {
		return nil
	}
	return o
}

func (o *consoleObserver) CallStarted(call *protocol.Call, kind, name string, at time.Time) {
	if c := o.c.Load(); c != nil {
		c.CallStarted(call, kind, name, at)
	}
}

func (o *consoleObserver) CallEnded(call *protocol.Call, e *audit.Entry) {
	if c := o.c.Load(); c != nil {
		c.CallEnded(call, e)
	}
}

// Ask asks the owner on the console, for a named client whose policy
// says confirmUnsupported page.
func (o *consoleObserver) Ask(ctx context.Context, call *protocol.Call, q protocol.OwnerQuestion) (jsontext.Value, error) {
	c := o.c.Load()
	if c == nil {
		return nil, fmt.Errorf("%w: the console is not serving yet", protocol.ErrOwnerAway)
	}
	return c.Ask(ctx, call, q)
}

// newConsole makes the owner's console of a bridge that serves one (over
// HTTP, or over stdio with --ui), else returns nil; with
// --confirm-unsupported page, the server asks it what clients cannot
// ask.
func newConsole(opts *options, lg *zerolog.Logger, srv *protocol.Server, reg *registry.Registry, backend *socketclient.Client, named *namedClients, obs *consoleObserver) *console.Console {
	if obs == nil {
		return nil
	}
	co := console.Options{
		Server: srv, Registry: reg, Tools: srv.Tools,
		Backend: backend.Check,
		ListCost: func(ctx context.Context, tools protocol.ToolProvider) (int, int, error) {
			c, err := measureList(ctx, tools)
			if err != nil {
				return 0, 0, err
			}
			return c.Tokens, c.Bytes, nil
		},
		AuditLog: opts.audit.path, AuditValues: opts.audit.values,
		AnswersHere: opts.confirmPage, Version: version(), Logger: lg,
	}
	if opts.transport == "http" {
		co.Guard = opts.http.handlerOptions().Guard // its Host and Origin checks, and the owner's token
		co.Secure = opts.http.tlsCert != ""
	}
	if named != nil {
		co.Clients = named.set
	}
	c := console.New(co)
	obs.c.Store(c)
	if opts.confirmPage {
		srv.Owner = c
	}
	return c
}

// withConsole serves the console at /ui beside h, when there is one.
func withConsole(h http.Handler, c *console.Console) http.Handler {
	if c == nil {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.Handle(console.Path, c.Handler())
	mux.Handle(console.Path+"/", c.Handler())
	return mux
}

// serveUI serves the console of a bridge over stdio on --ui, and returns
// what stops it; without --ui it does nothing.
func serveUI(e *env, opts *options, lg *zerolog.Logger, c *console.Console) (stop func(), err error) {
	if opts.ui == "" || c == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", opts.ui)
	if err != nil {
		return nil, fmt.Errorf("--ui: listen on %s: %w", opts.ui, err)
	}
	c.SetBase("http://" + ln.Addr().String())
	hs := &http.Server{
		Handler:           withConsole(http.NotFoundHandler(), c),
		ReadHeaderTimeout: defaultHeaderTimeout,
		ReadTimeout:       defaultHeaderTimeout + 30*time.Second,
		IdleTimeout:       defaultIdleTimeout, // no WriteTimeout: the event streams last, each write bounded by the console
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          log.New(logWriter{lg}, "", 0),
	}
	served := make(chan struct{})
	go func() { // ends when hs is closed
		defer close(served)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			lg.Error().Err(err).Msg("the owner's console stopped")
		}
	}()
	removeRun := announceConsole(e, lg, c, "stdio")
	return func() {
		c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close()
		}
		<-served
		removeRun()
	}, nil
}

// announceConsole says where the owner's console is, on stderr and in
// the log, and writes the run file doctor lists; it returns what removes
// that file. The URL holds the console's secret: stderr and the run file
// are the owner's.
func announceConsole(e *env, lg *zerolog.Logger, c *console.Console, transport string) (remove func()) {
	if c == nil {
		return func() {}
	}
	fmt.Fprintf(e.stderr, "the owner's console: %s\n", c.URL())
	lg.Info().Str("url", c.PublicURL()).Msg("serving the owner's console (its address with the secret is on stderr, and in 'tairseach-mcp doctor')")
	home, err := os.UserHomeDir()
	if err != nil {
		return func() {}
	}
	path, err := writeRunFile(home, runFile{PID: os.Getpid(), URL: c.URL(), Transport: transport, Started: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		lg.Warn().Err(err).Msg("cannot write the run file: doctor will not list this console")
		return func() {}
	}
	return func() { os.Remove(path) }
}

// runFile says where a running bridge serves its console, for doctor:
// ~/.tairseach/run/bridge-PID.json, 0600, removed at exit.
type runFile struct {
	PID       int    `json:"pid"`
	URL       string `json:"url"`
	Transport string `json:"transport"`
	Started   string `json:"started"`
}

func runDir(home string) string { return filepath.Join(home, ".tairseach", "run") }

// writeRunFile writes rf, first removing the files of bridges no longer
// running, and returns its path.
func writeRunFile(home string, rf runFile) (string, error) {
	dir := runDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for _, r := range readRunFiles(home) {
		if !alive(r.PID) {
			os.Remove(filepath.Join(dir, "bridge-"+strconv.Itoa(r.PID)+".json"))
		}
	}
	b, err := json.Marshal(rf)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "bridge-"+strconv.Itoa(rf.PID)+".json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// readRunFiles returns the run files that can be read.
func readRunFiles(home string) []runFile {
	paths, _ := filepath.Glob(filepath.Join(runDir(home), "bridge-*.json"))
	var out []runFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var rf runFile
		if json.Unmarshal(b, &rf) == nil && rf.PID > 0 {
			out = append(out, rf)
		}
	}
	return out
}

// alive reports whether a process of this user runs with pid.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// checkConsoles lists the consoles of the bridges running, with the
// addresses that open them: the user running doctor is the owner.
func checkConsoles(home string) result {
	r := result{Name: "consoles"}
	var open []string
	for _, rf := range readRunFiles(home) {
		if alive(rf.PID) {
			open = append(open, fmt.Sprintf("%s (pid %d, %s)", rf.URL, rf.PID, rf.Transport))
		}
	}
	if len(open) == 0 {
		return r.info("no bridge serves the owner's console now (--transport http serves it at /ui, --ui ADDR over stdio; docs/console.md)", "")
	}
	return r.info(fmt.Sprintf("%s of running bridges: %s", plural(len(open), "console"), strings.Join(open, "; ")), "")
}
