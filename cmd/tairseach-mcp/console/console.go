// Package console is the owner's console: a few web pages, served by the
// bridge itself, on which the person whose data sits behind the backend
// sees what the assistants do (what is served, who calls what, calls live
// and recent, tasks, charts) and answers the questions a client cannot ask
// its user (--confirm-unsupported page).
//
// It is a thin reader of what the other packages keep: the protocol
// server's counters and tasks (protocol.Server.Stats and LiveTasks), the
// registry's snapshots and the named clients' views, the audit log's
// tail; what it keeps itself is bounded: the calls in flight and a ring
// of the last ones ended, told by the registry (it is a
// registry.Observer), and the questions waiting for the owner (it is a
// protocol.Owner).
//
// Only the owner opens it: a secret made at each start is part of the URL
// the bridge logs, exchanged at first load for a cookie; the owner's
// bearer token works too, a named client's never. The pages are rendered
// on the server with html/template, every value a client or a model
// controls escaped; they are readable without JavaScript, and a small
// script of the console's own (no inline script: the Content-Security-
// Policy allows none) follows server-sent events to show calls live. See
// docs/console.md.
package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// Path is where the console's pages are: Path + "/", and below.
const Path = "/ui"

// Options say what the console shows, and who may open it. Server and
// Registry are required.
type Options struct {
	// Server is the protocol server whose sessions, calls in flight,
	// tasks and bytes held the console shows.
	Server *protocol.Server
	// Registry is the tool table; Tools what clients see of it by default
	// (the registry, or search mode's tools over it; nil: the registry).
	Registry *registry.Registry
	Tools    protocol.ToolProvider
	// Clients are the named clients, nil without a clients file.
	Clients *clients.Set
	// Backend checks whether the backend answers; nil: not shown.
	Backend func(ctx context.Context) error
	// ListCost measures what a tool list costs a client: the tokens and
	// bytes of its tools/list response; nil: not shown.
	ListCost func(ctx context.Context, tools protocol.ToolProvider) (tokens, bytes int, err error)
	// AuditLog is the audit log's path, "" when there is none; its tail
	// gives the recent calls and the charts. AuditValues says that its
	// entries hold the arguments' values (secrets redacted), which the
	// console then shows.
	AuditLog    string
	AuditValues bool
	// Guard checks the Host and Origin of every request as the MCP
	// endpoint's are, and its Token, the owner's, opens the console as a
	// bearer token. Its Clients are never consulted: a named client's
	// token does not open the console.
	Guard mcphttp.Guard
	// Secure marks the cookie Secure: the console is served over TLS.
	Secure bool
	// AnswersHere says that questions a client cannot ask come here
	// (--confirm-unsupported page), for the pages to say so.
	AnswersHere bool
	// Version names the bridge's version on the pages.
	Version string
	// Logger receives the console's logs; nil means none.
	Logger *zerolog.Logger
}

// Console serves the owner's console. Make one with New, give it its
// address with SetBase once the listener is open, serve its Handler, and
// end it with Close. Its methods are safe for concurrent use.
type Console struct {
	opts    Options
	log     zerolog.Logger
	secret  string // in the URL the bridge logs; exchanged for a cookie
	key     []byte // signs the pages' CSRF tokens
	started time.Time
	pages   *pages
	tail    *tail // nil without an audit log
	live    *live
	asks    *asks
	// browsers are the owner's browser sessions, by cookie.
	browsers sessions
	backend  backend // whether the backend answered, lately

	costMu sync.Mutex
	costs  map[*protocol.ToolSet][2]int // what each list of tools costs: tokens, bytes

	mu   sync.Mutex
	base string // scheme://host:port, once known
}

// New returns a console, with a new secret.
func New(o Options) *Console {
	if o.Tools == nil {
		o.Tools = o.Registry
	}
	c := &Console{opts: o, log: zerolog.Nop(), secret: randomHex(16), key: []byte(randomHex(32)), started: time.Now(),
		pages: newPages(), live: newLive(), costs: map[*protocol.ToolSet][2]int{}}
	if o.Logger != nil {
		c.log = *o.Logger
	}
	if o.AuditLog != "" {
		c.tail = newTail(o.AuditLog, tailEntries)
	}
	c.asks = newAsks(c.live)
	return c
}

// SetBase gives the console the address it is served at, such as
// http://127.0.0.1:8411: the URLs it says are made from it.
func (c *Console) SetBase(base string) {
	c.mu.Lock()
	c.base = strings.TrimSuffix(base, "/")
	c.mu.Unlock()
}

// URL returns the address that opens the console, with its secret: the
// owner's, never to be shown to a client or a model.
func (c *Console) URL() string { return c.PublicURL() + "?s=" + c.secret }

// PublicURL returns the console's address without its secret: it opens
// nothing by itself, and may be said to a client.
func (c *Console) PublicURL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base + Path + "/"
}

// Close ends the console's event streams and refuses the questions that
// wait for the owner. The handler answers 503 afterwards.
func (c *Console) Close() {
	c.live.close()
	c.asks.close()
}

// Handler returns the handler of the console's pages, for Path and
// below; anything else is not found.
func (c *Console) Handler() http.Handler { return http.HandlerFunc(c.serve) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// mac returns the hex HMAC-SHA256 of parts under the console's key.
func (c *Console) mac(parts ...string) string {
	m := hmac.New(sha256.New, c.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}
