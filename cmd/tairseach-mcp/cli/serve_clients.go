package cli

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// namedClients are the named clients a bridge serves (a clients file),
// and what follows a change of the file: a revoked client's HTTP sessions
// end, every session lists again when a policy changed, and a bridge over
// stdio whose client was removed ends.
type namedClients struct {
	set     *clients.Set
	srv     *protocol.Server
	log     *zerolog.Logger
	handler atomic.Pointer[mcphttp.Handler] // set once HTTP serves
	client  string                          // --client, over stdio
	end     context.CancelFunc              // ends the stdio session, with --client
}

// openClients opens the clients file of a bridge: over HTTP always (a
// file that is not there means no named clients, until one appears), over
// stdio only with --client, whose client must be in it. It returns nil
// when the bridge serves no named clients. srv's tools are the registry's
// in the chosen --tool-mode. obs, the console's when the bridge serves
// one, answers for the clients whose policy sends their questions to it.
func openClients(opts *options, log *zerolog.Logger, srv *protocol.Server, reg *registry.Registry, obs *consoleObserver) (*namedClients, error) {
	if opts.transport != "http" && opts.client == "" {
		return nil, nil
	}
	nc := &namedClients{srv: srv, log: log, client: opts.client}
	co := clients.Options{Registry: reg, Logger: log, OnChange: nc.changed}
	if obs != nil {
		co.Owner = obs
	}
	if s, ok := srv.Tools.(*registry.Search); ok {
		co.Search = s
	}
	set, err := clients.Open(opts.clients, co)
	if err != nil {
		return nil, fmt.Errorf("--clients: %w", err)
	}
	nc.set = set
	if opts.client != "" {
		if !set.Named() {
			return nil, usageError{fmt.Errorf("--client %s: there is no clients file at %s; add the client first: tairseach-mcp clients add %s", opts.client, opts.clients, opts.client)}
		}
		if _, ok := set.Client(opts.client); !ok {
			return nil, usageError{fmt.Errorf("--client %s: %s has no such client (see tairseach-mcp clients list)", opts.client, opts.clients)}
		}
	}
	srv.PrincipalLimit = set.Limit
	return nc, nil
}

// changed follows a change of the clients file.
func (nc *namedClients) changed(ch clients.Change) {
	if h := nc.handler.Load(); h != nil && len(ch.Revoked) > 0 {
		n := h.EndRevoked()
		nc.log.Info().Int("revoked", len(ch.Revoked)).Int("sessions", n).Msg("clients revoked: their sessions ended")
	}
	if ch.Lists {
		notifyChanges(nc.srv, registry.Changes{Tools: true, Resources: true, Prompts: true})
	}
	if nc.client != "" {
		if _, ok := nc.set.Client(nc.client); !ok {
			nc.log.Error().Str("client", nc.client).Str("clients", nc.set.Path()).Msg("the client was removed from the clients file: ending the session")
			nc.end()
		}
	}
}

// watch follows the clients file until ctx ends. Edits are served within
// a second, whatever --no-watch says of the manifests: removing a client
// must take its rights away.
func (nc *namedClients) watch(ctx context.Context) {
	if err := nc.set.Watch(ctx); err != nil {
		nc.log.Error().Err(err).Str("clients", nc.set.Path()).Msg("cannot watch the clients file; changes need a restart")
	}
}

// session returns the options of the stdio session of --client: its
// view and rights, and its rate, over stdio an isError result past it.
func (nc *namedClients) session() protocol.SessionOptions {
	c, _ := nc.set.Client(nc.client) // checked by openClients
	o := c.Session()
	o.Transport = "stdio"
	o.Admit = func() (time.Duration, bool) {
		// The client as the file says now: its rate survives edits.
		if c, ok := nc.set.Client(nc.client); ok {
			return c.Admit(1)
		}
		return 0, true // removed: the session is ending
	}
	return o
}

// lookup resolves a bearer token for the HTTP guard.
func (nc *namedClients) lookup(token string) (mcphttp.Client, bool) {
	c, named := nc.set.Lookup(token)
	if c == nil {
		return nil, named
	}
	return c, named
}
