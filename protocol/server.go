package protocol

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero values of Server's limits.
const (
	DefaultMaxMessageSize   = 32 << 20
	DefaultMaxInFlight      = 256
	DefaultMaxPendingBytes  = 16 << 20
	DefaultShutdownGrace    = 5 * time.Second
	DefaultProgressInterval = 5 * time.Second
	DefaultPageSize         = 2000
)

// Server serves MCP over one newline-delimited JSON-RPC stream per call to
// Serve. Set its exported fields before the first Serve; after that they
// must not change. Its methods are safe for concurrent use, and one Server
// may serve several streams at once.
type Server struct {
	// Info names the server in initialize and discover results.
	Info Implementation
	// Instructions is sent to clients when non-empty.
	Instructions string
	// Tools is the tool table. Required.
	Tools ToolProvider
	// Resources, Prompts and Completions serve resources and resource
	// templates, prompts, and completion/complete; each is optional.
	// Without Resources or Prompts their lists are empty; without
	// Completions, completion/complete is an unknown method.
	Resources   ResourceProvider
	Prompts     PromptProvider
	Completions CompletionProvider
	// Logger receives the server's own logs; nil means none.
	Logger *zerolog.Logger
	// ListChanged declares tools.listChanged; call NotifyToolsChanged
	// when the list changes.
	ListChanged bool
	// ResourcesListChanged and PromptsListChanged declare
	// resources.listChanged and prompts.listChanged (with a provider);
	// call NotifyResourcesChanged and NotifyPromptsChanged when the
	// resources (or templates) and the prompts change.
	ResourcesListChanged bool
	PromptsListChanged   bool

	// MaxMessageSize bounds one incoming message in bytes, not counting
	// its line ending (default 32 MiB). A longer request is answered with
	// an error when its first bytes show its id, or its last bytes end with
	// it as the last member, and skipped.
	MaxMessageSize int
	// MaxInFlight bounds concurrently running tool calls (default 256).
	// Past it, as many again wait their turn without holding up other
	// requests; past that the reader waits, which pushes back on the
	// client.
	MaxInFlight int
	// MaxPendingBytes bounds the memory a session holds for a client that
	// reads slowly or not at all (default 16 MiB): the bytes of responses
	// and notifications produced but not yet written. At the bound, the
	// reader stops reading requests and tool calls wait before they start,
	// until the writer has made room. Calls already running still finish,
	// so the bytes held may pass the bound by what those calls return (at
	// most MaxInFlight results); a message larger than the bound is still
	// written once nothing else is pending. A 2025-03-26 batch's responses
	// are bounded by it too: an element whose response would take the
	// batch past it is answered with an error instead.
	MaxPendingBytes int
	// ShutdownGrace bounds how long Serve waits for in-flight calls once
	// its context is cancelled (default 5 s).
	ShutdownGrace time.Duration
	// ProgressInterval is the heartbeat period of notifications/progress
	// for calls that carry a progress token (default 5 s; negative: off).
	ProgressInterval time.Duration
	// PageSize is the number of items per page of tools/list,
	// resources/list, resources/templates/list and prompts/list. 0 means
	// one page, unless the list is longer than DefaultPageSize items: then
	// pages of DefaultPageSize, so no single message grows without bound.
	PageSize int

	mu       sync.Mutex
	sessions map[*session]struct{}
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// NotifyToolsChanged tells every connected client that wants to know that
// the tool list changed.
func (s *Server) NotifyToolsChanged() { s.notifyListChanged(toolsList) }

// NotifyResourcesChanged tells every connected client that wants to know
// that the resources or the resource templates changed.
func (s *Server) NotifyResourcesChanged() { s.notifyListChanged(resourcesList) }

// NotifyPromptsChanged tells every connected client that wants to know
// that the prompts changed.
func (s *Server) NotifyPromptsChanged() { s.notifyListChanged(promptsList) }

func (s *Server) notifyListChanged(k listKind) {
	if !s.announces(k) {
		return
	}
	for _, ss := range s.liveSessions() {
		ss.notifyListChanged(k)
	}
}

// Log sends a log message to every client that enabled logging at level
// or a more verbose one. data is any JSON-encodable value.
func (s *Server) Log(level LogLevel, logger string, data any) {
	for _, ss := range s.liveSessions() {
		if int32(level) >= ss.logLevel.Load() {
			ss.sendLog(level, logger, data)
		}
	}
}

func (s *Server) liveSessions() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// Serve reads requests from r and writes responses and notifications to w
// until r reaches EOF, ctx is cancelled, or a write to w fails.
//
// On EOF it lets in-flight requests finish, writes their responses and
// returns nil. On cancellation of ctx it does the same within
// ShutdownGrace, then cancels what is left. A failed write ends the session
// at once and is returned. Serve does not close r or w. If r blocks after
// ctx is cancelled, the goroutine reading it stays blocked until r returns;
// the caller owns r and may close it.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	if s.Tools == nil {
		return errors.New("protocol: Server.Tools is nil")
	}
	log := zerolog.Nop()
	if s.Logger != nil {
		log = *s.Logger
	}
	ss := &session{
		srv:      s,
		log:      log,
		out:      newOutbox(w, orDefault(s.MaxPendingBytes, DefaultMaxPendingBytes)),
		admitted: make(chan struct{}, 2*orDefault(s.MaxInFlight, DefaultMaxInFlight)),
		sem:      make(chan struct{}, orDefault(s.MaxInFlight, DefaultMaxInFlight)),
		stopped:  make(chan struct{}),
		inflight: make(map[string]*call),
		runner:   newRunner(),
	}
	ss.out.yield = func() {
		// With many calls running, responses come in runs: yielding once
		// lets the calls that are ready queue theirs, so that one write
		// carries several (each write is a system call here and a wake-up
		// in the client), which makes most of the cost of a call under
		// pipelined load.
		if len(ss.sem) > coalesceFrom {
			runtime.Gosched()
		}
	}
	ss.logLevel.Store(int32(logOff))
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = make(map[*session]struct{})
	}
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
	}()
	return ss.serve(ctx, r)
}
