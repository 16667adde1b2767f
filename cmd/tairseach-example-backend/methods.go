package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/rs/zerolog"
)

// maxSleep bounds debug.sleep: ten minutes.
const maxSleep = 600_000

// backend holds the state behind the example methods. Its methods are
// safe for concurrent use.
type backend struct {
	notes   *noteStore
	files   *fileLister
	started time.Time
}

// newBackend opens the notes store in dataDir (creating it) and checks
// that filesRoot is a folder.
func newBackend(dataDir, filesRoot string, log zerolog.Logger) (*backend, error) {
	notes, err := openNoteStore(dataDir, log)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(filesRoot)
	if err != nil {
		return nil, fmt.Errorf("files root %s: %w", filesRoot, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("files root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("files root %s is not a folder", abs)
	}
	return &backend{notes: notes, files: &fileLister{root: abs}, started: time.Now()}, nil
}

// methods returns the method table: JSON-RPC method name → handler. The
// conformance fixtures' methods are among them (conformance.go).
func (b *backend) methods() map[string]handler {
	m := map[string]handler{
		"notes.create":   b.notes.create,
		"notes.list":     b.notes.list,
		"notes.get":      b.notes.get,
		"notes.delete":   b.notes.delete,
		"notes.complete": b.notes.complete,
		"notes.import":   b.notes.importNotes,
		"notes.digest":   b.notes.digest,
		"notes.label":    b.notes.label,
		"backend.status": b.status,
		"system.info":    b.systemInfo,
		"files.list":     b.files.list,
		"files.roots":    listRoots,
		"secrets.read":   secretsRead,
		"debug.sleep":    debugSleep,
		"echo":           echo,
		"backend.ping":   ping,
	}
	maps.Copy(m, conformanceMethods())
	maps.Copy(m, b.taskMethods())
	return m
}

// status is the result of backend.status.
type status struct {
	Status        string `json:"status"` // always "ok": a backend that answers is up
	StartedAt     string `json:"started_at"`
	UptimeSeconds int64  `json:"uptime_seconds"`
	Notes         int    `json:"notes"`
	FilesRoot     string `json:"files_root"`
}

func (b *backend) status(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	n, err := b.notes.count()
	if err != nil {
		return nil, err
	}
	return status{Status: "ok", StartedAt: b.started.UTC().Format(time.RFC3339), UptimeSeconds: int64(time.Since(b.started).Seconds()),
		Notes: n, FilesRoot: b.files.root}, nil
}

// systemInfo is the result of system.info.
type systemInfo struct {
	Hostname      string `json:"hostname"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	GoVersion     string `json:"go_version"`
	NumCPU        int    `json:"num_cpu"`
	UptimeSeconds int64  `json:"uptime_seconds"`
	PID           int    `json:"pid"`
	User          string `json:"user"`
}

func (b *backend) systemInfo(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return systemInfo{
		Hostname:      host,
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		GoVersion:     runtime.Version(),
		NumCPU:        runtime.NumCPU(),
		UptimeSeconds: int64(time.Since(b.started).Seconds()),
		PID:           os.Getpid(),
		User:          userName(),
	}, nil
}

func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return strconv.Itoa(os.Getuid())
}

// secretsRead validates its params and then always refuses: it is the
// example of a backend permission error.
func secretsRead(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	p, err := bind[struct {
		Name *string `json:"name"`
	}](params)
	if err != nil {
		return nil, err
	}
	if _, err := required(p.Name, "name"); err != nil {
		return nil, err
	}
	return nil, &rpcError{
		Code:    codePermission,
		Message: "Permission denied",
		Data:    map[string]string{"reason": "the example backend never reveals secrets"},
	}
}

// debugSleep is slow on purpose: it waits ms milliseconds, or until the
// backend shuts down.
func debugSleep(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	p, err := bind[struct {
		MS *integer `json:"ms"`
	}](params)
	if err != nil {
		return nil, err
	}
	// Without ms it sleeps one second: enough for a client to see
	// progress heartbeats, which is what callers without arguments want.
	ms := integer(1000)
	if p.MS != nil {
		ms = *p.MS
	}
	if ms < 0 || ms > maxSleep {
		return nil, invalidParams("ms must be between 0 and %d, got %d", maxSleep, ms)
	}
	start := time.Now()
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return map[string]int64{"slept_ms": int64(ms)}, nil
	case <-ctx.Done():
		return nil, &rpcError{
			Code:    codeShuttingDown,
			Message: "interrupted: the backend is shutting down",
			Data:    map[string]int64{"slept_ms": time.Since(start).Milliseconds()},
		}
	}
}

// echo returns its params as received (null when there are none).
func echo(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	if params == nil {
		params = nullID
	}
	return map[string]json.RawMessage{"params": params}, nil
}

func ping(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	if _, err := bind[struct{}](params); err != nil {
		return nil, err
	}
	return map[string]bool{"ok": true}, nil
}
