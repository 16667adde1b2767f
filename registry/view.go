package registry

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
)

// Policy narrows what one client sees of a registry and may do with it:
// its tools, resources and prompts, and which tools ask the user first. It
// never widens what the registry's own Filter and Confirm allow.
type Policy struct {
	// Client names the client in the reasons its view gives for what it
	// does not serve.
	Client string
	// Filter keeps more from the client: an item is served when the
	// registry's Filter and this one both let it through (their includes
	// intersect, their excludes add up, either's ReadOnly holds).
	Filter Filter
	// Confirm are patterns, with Filter's syntax, of more tools that ask
	// the user first, whatever the registry's Confirm says ("*" is every
	// tool).
	Confirm []string
	// DenyUnasked refuses a call that would ask, when the client cannot
	// ask, even where the registry's Confirm lets it run.
	DenyUnasked bool
}

// Check returns an error naming the first malformed pattern.
func (p *Policy) Check() error {
	if err := p.Filter.Check(); err != nil {
		return err
	}
	return Filter{Include: p.Confirm}.Check()
}

// rules decide what a snapshot serves of its manifests, and how: the
// registry's prefix, Filter and Confirm, and, for a client's view, its
// Policy.
type rules struct {
	prefix  string
	filter  Filter
	confirm Confirm
	policy  *Policy // nil for the registry's own snapshot
}

func (r *Registry) rules() rules {
	return rules{prefix: r.opts.Prefix, filter: r.opts.Filter, confirm: r.opts.Confirm}
}

// narrowed returns why the policy keeps an item the registry's filter lets
// through from its client, "" when it does not: why is the policy
// filter's reason.
func (ru rules) narrowed(why string) string {
	if ru.policy == nil || why == "" {
		return why
	}
	return fmt.Sprintf("%s (the policy of client %s)", why, ru.policy.Client)
}

// reason returns why the rules keep the tool from clients, or "".
func (ru rules) reason(client string, t *manifest.Tool) string {
	if why := ru.filter.reason(client, t); why != "" || ru.policy == nil {
		return why
	}
	return ru.narrowed(ru.policy.Filter.reason(client, t))
}

// named returns why the rules' patterns keep an item known by names from
// clients, or "".
func (ru rules) named(names ...string) string {
	if why := ru.filter.named(names...); why != "" || ru.policy == nil {
		return why
	}
	return ru.narrowed(ru.policy.Filter.named(names...))
}

// contentReason returns why the rules keep a resource or template of m
// from clients, or "" (see Filter.contentReason).
func (ru rules) contentReason(m *manifest.Manifest, method string, names ...string) string {
	if why := ru.filter.contentReason(m, method, names...); why != "" || ru.policy == nil {
		return why
	}
	return ru.narrowed(ru.policy.Filter.contentReason(m, method, names...))
}

// completions returns the completion methods of complete that the rules
// let clients call; nil when none.
func (ru rules) completions(m *manifest.Manifest, complete map[string]string) map[string]string {
	out := ru.filter.completions(m, complete)
	if ru.policy != nil {
		out = ru.policy.Filter.completions(m, out)
	}
	return out
}

// confirmReason returns why t, named client, asks first, or nil: as the
// registry's Confirm says, or else because a pattern of the policy
// matches it.
func (ru rules) confirmReason(client string, t *manifest.Tool) *ConfirmReason {
	if c := ru.confirm.reason(client, t); c != nil || ru.policy == nil {
		return c
	}
	if p, ok := matchAny(ru.policy.Confirm, client, t.Name); ok {
		return &ConfirmReason{By: "policy", Pattern: p}
	}
	return nil
}

// denyUnasked reports whether a call that would ask is refused when its
// client cannot ask.
func (ru rules) denyUnasked() bool {
	return ru.confirm.DenyUnasked || ru.policy != nil && ru.policy.DenyUnasked
}

// readOnly reports whether the rules serve only read-only tools.
func (ru rules) readOnly() bool {
	return ru.filter.ReadOnly || ru.policy != nil && ru.policy.Filter.ReadOnly
}

// View is what one client sees of a Registry: the registry's tools,
// resources, resource templates and prompts narrowed by the client's
// Policy, with the same backend, limits, audit log and fair share of
// connections. It is a protocol.ToolProvider, ResourceProvider,
// PromptProvider and CompletionProvider, and safe for concurrent use.
//
// Its snapshot is the registry's, narrowed: built once per snapshot of
// the registry and per policy, when first asked for, and as immutable.
// So listing and calling cost what they cost the registry itself, and a
// reload or a new policy takes effect at the next request.
type View struct {
	r        *Registry
	policy   atomic.Pointer[Policy]
	built    atomic.Pointer[viewSnapshot]
	building sync.Mutex // one request builds a new snapshot; the others wait for it
}

// viewSnapshot is a view's snapshot, and what it was built from.
type viewSnapshot struct {
	base   *Snapshot
	policy *Policy
	snap   *Snapshot
}

// View returns the view of r that p narrows. p must pass Check.
func (r *Registry) View(p *Policy) *View {
	v := &View{r: r}
	v.policy.Store(p)
	return v
}

// SetPolicy replaces the view's policy: the view's next request is
// served by it. p must pass Check.
func (v *View) SetPolicy(p *Policy) { v.policy.Store(p) }

// Policy returns the view's policy.
func (v *View) Policy() *Policy { return v.policy.Load() }

// Snapshot returns what the view serves now. With the registry's
// LoadInBackground it may be empty until Loaded is closed.
func (v *View) Snapshot() *Snapshot {
	base, p := v.r.snap.Load(), v.policy.Load()
	if p == nil {
		return base
	}
	if old := v.built.Load(); old != nil && old.base == base && old.policy == p {
		return old.snap
	}
	v.building.Lock()
	defer v.building.Unlock()
	old := v.built.Load()
	if old != nil && old.base == base && old.policy == p {
		return old.snap // built while this request waited
	}
	ru := base.rules
	ru.policy = p
	snap := build(ru, base.ms, base)
	snap.Problems = base.Problems
	if old != nil {
		// An unchanged list keeps its old set, as a reload does: clients'
		// pagination cursors stay valid.
		if snap.tools.Equal(old.snap.tools) {
			snap.tools = old.snap.tools
		}
		if snap.resources.Equal(old.snap.resources) {
			snap.resources = old.snap.resources
		}
		if snap.prompts.Equal(old.snap.prompts) {
			snap.prompts = old.snap.prompts
		}
	}
	v.built.Store(&viewSnapshot{base: base, policy: p, snap: snap})
	return snap
}

// Tools returns the tools the view serves, waiting for the registry's
// first load; part of protocol.ToolProvider.
func (v *View) Tools() *protocol.ToolSet {
	<-v.r.loaded
	return v.Snapshot().tools
}

// CallTool runs a tool the view serves, as Registry.CallTool does; a tool
// the policy keeps from the client is refused as a filtered tool is.
func (v *View) CallTool(ctx context.Context, call *protocol.Call, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return v.r.callTool(ctx, call, req, v.Snapshot)
}

// Resources returns the resources and templates the view serves;
// part of protocol.ResourceProvider.
func (v *View) Resources() *protocol.ResourceSet {
	<-v.r.loaded
	return v.Snapshot().resources
}

// ReadResource reads a resource the view serves, as Registry.ReadResource
// does.
func (v *View) ReadResource(ctx context.Context, call *protocol.Call, req *protocol.ReadResourceRequest) (*protocol.ReadResourceResult, error) {
	return v.r.readResource(ctx, call, req, v.Snapshot)
}

// Prompts returns the prompts the view serves; part of
// protocol.PromptProvider.
func (v *View) Prompts() *protocol.PromptSet {
	<-v.r.loaded
	return v.Snapshot().prompts
}

// GetPrompt fills in a prompt the view serves, as Registry.GetPrompt
// does.
func (v *View) GetPrompt(ctx context.Context, call *protocol.Call, req *protocol.GetPromptRequest) (*protocol.GetPromptResult, error) {
	return v.r.getPromptIn(ctx, call, req, v.Snapshot)
}

// Complete completes an argument of a prompt or template the view
// serves, as Registry.Complete does; part of protocol.CompletionProvider.
func (v *View) Complete(ctx context.Context, call *protocol.Call, req *protocol.CompleteRequest) (*protocol.CompleteResult, error) {
	return v.r.complete(ctx, call, req, v.Snapshot)
}
