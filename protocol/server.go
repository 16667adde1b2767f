package protocol

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero values of Server's limits.
const (
	DefaultMaxMessageSize   = 32 << 20
	DefaultMaxInFlight      = 256
	DefaultMaxHeldBytes     = 64 << 20
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
	// MaxMessageSizeHint completes the error answering a longer message
	// with how to raise the limit, such as "raise --max-message-size to
	// accept it"; "" adds nothing.
	MaxMessageSizeHint string
	// MaxInFlight bounds the tool calls running at once in a session
	// (default 256). Past it, as many again wait their turn without
	// holding up other requests; past that the reader waits, which pushes
	// back on the client.
	MaxInFlight int
	// MaxTotalInFlight bounds the tool calls running at once in all
	// sessions together (default: MaxInFlight, which suits one session),
	// shared fairly among their principals (see FairShare).
	MaxTotalInFlight int
	// PrincipalLimit, when set, returns the most tool calls one principal
	// may run at once in all its sessions (0: no limit of its own), such
	// as a named client's; its calls past it wait their turn. It is asked
	// as each call starts, so a limit that changes holds from the next
	// call on, and must not block.
	PrincipalLimit func(Principal) int
	// MaxHeldBytes bounds the bytes a session holds on behalf of its
	// requests (default 64 MiB): their arguments, the backend's replies
	// while they are read, and responses and notifications until the
	// client reads them. Past it the session reads no more requests,
	// calls wait before they read more of a reply (but the oldest, which
	// always goes on), and notifications are dropped. A single message
	// larger than the bound still goes through, alone.
	MaxHeldBytes int
	// MaxTotalHeldBytes bounds the same bytes for every session of the
	// server together (default: MaxHeldBytes, which suits one session).
	MaxTotalHeldBytes int
	// ShutdownGrace bounds how long Serve waits for in-flight calls once
	// its context is cancelled (default 5 s).
	ShutdownGrace time.Duration
	// Hurry, when closed, ends the grace period at once: someone asked
	// twice for the process to stop.
	Hurry <-chan struct{}
	// AskTimeout bounds every wait for a person or the client's model: a
	// question to the user (a confirmation, a form), a request for a
	// completion, for the roots; and in 2026-07-28 the lifetime of the
	// requestState that asks (default 5 min). A call's own timeout
	// (Call.WithTimeout) stops meanwhile.
	AskTimeout time.Duration
	// MaxPendingAsks bounds the calls whose provider (the backend)
	// waits for the client's answers at once, in all sessions (default
	// 8): past it, a provider's question is answered CodeRequestTimeout
	// at once.
	MaxPendingAsks int
	// Refused, when set, is told of each tools/call the server refuses
	// itself, before its tool provider is asked, because the
	// requestState it carries (2026-07-28) was forged, has expired, was
	// redeemed already or was issued for another call: reason is one of
	// the State constants. The audit log records such attempts. It must
	// not block.
	Refused func(call *Call, req *CallToolRequest, reason string)
	// Owner, when set, is asked the questions for the user that a call's
	// client cannot ask (it declared no elicitation): the bridge's
	// confirmations and a provider's forms (see Owner). Without it such
	// a question is refused with CodeMissingCapability, and CanConfirm
	// tells a provider before it asks.
	Owner Owner
	// MaxTasks bounds the tasks kept at once (default 4096), and
	// MaxTasksPerOwner those of one owner (default 256): running, waiting
	// for the client's answers, or ended and kept for their results.
	// Past either, a call to a tool whose taskSupport is optional runs as
	// an ordinary call; one whose taskSupport is required is refused
	// (-32603, "too many tasks", with data.retryAfterMs).
	MaxTasks, MaxTasksPerOwner int
	// MaxTaskTTL bounds a task's time to live, counted from its creation
	// (default 2 h): a client may ask for less (2025-11-25's params.task.ttl),
	// never for more. At its end the task is forgotten, its result's
	// bytes released, and its call cancelled if it still runs.
	MaxTaskTTL time.Duration
	// MaxTaskBytes bounds the bytes of the results of tasks kept, in all
	// (default 16 MiB, and at most half of MaxTotalHeldBytes, which counts
	// them). A result that does not fit fails its task.
	MaxTaskBytes int
	// TaskAfter is how much of its own time a call that may run as a task
	// works before it becomes one (default 1 s), unless it reports
	// progress first; the time it waits for answers does not count.
	TaskAfter time.Duration
	// TaskRecorded, when set, is told when a task is created and when it
	// ends. The audit log records both. It must not block.
	TaskRecorded func(ev TaskEvent)
	// ProgressInterval is the heartbeat period of notifications/progress
	// for calls that carry a progress token (default 5 s; negative: off).
	ProgressInterval time.Duration
	// PageSize is the number of items per page of tools/list,
	// resources/list, resources/templates/list and prompts/list. 0 means
	// one page, unless the list is longer than DefaultPageSize items: then
	// pages of DefaultPageSize, so no single message grows without bound.
	PageSize int

	mu       sync.Mutex
	sessions map[*Session]struct{}
	budget   *budget            // the total, made by the first session
	running  *FairShare         // the calls running in all sessions; made with budget
	states   *inputStates       // made at first use
	asking   int                // calls waiting for the client's answers (startAsking)
	parked   map[string]*parked // 2026-07-28 calls that may ask, by id

	taskStore *taskStore    // made at first use
	taskID    func() string // makes task ids; nil: 128 random bits (tests make them predictable)
}

// inputStates returns the server's issuer of 2026-07-28 requestStates.
func (s *Server) inputStates() *inputStates {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states == nil {
		s.states = newInputStates(orDefault(s.AskTimeout, DefaultAskTimeout))
	}
	return s.states
}

// total returns the server's budget, which every session's draws on.
func (s *Server) total() *budget {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.budget == nil {
		limit := orDefault(s.MaxTotalHeldBytes, orDefault(s.MaxHeldBytes, DefaultMaxHeldBytes))
		s.budget = newBudget(int64(limit), nil)
		s.running = NewFairShare(orDefault(s.MaxTotalInFlight, orDefault(s.MaxInFlight, DefaultMaxInFlight)), s.PrincipalLimit)
	}
	return s.budget
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
			ss.sendLog(ss.out, level, logger, data)
		}
	}
}

func (s *Server) liveSessions() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// register adds ss to the sessions that notifications reach.
func (s *Server) register(ss *Session) {
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = make(map[*Session]struct{})
	}
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) unregister(ss *Session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}
