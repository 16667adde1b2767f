package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry/audit"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// Outcomes of a call, as logged in the outcome field.
const (
	outcomeOK               = "ok"
	outcomeInvalidArguments = "invalid_arguments"
	outcomeBackendError     = "backend_error"
	outcomeUnavailable      = "unavailable"
	outcomeBusy             = "busy"
	outcomeTimeout          = "timeout"
	outcomeCancelled        = "cancelled"
	outcomeBadReply         = "bad_reply"
	outcomeContractBroken   = "contract_broken"
	outcomeFailed           = "failed"
	outcomeUnknownTool      = "unknown_tool"
	outcomeRefused          = "refused"        // by a filter or a limit of the bridge
	outcomeDeclined         = "declined"       // the user did not allow it, or did not answer
	outcomeAsked            = "input_required" // 2026-07-28: the question went out in the result
)

// CallTool runs a tool: it looks the name up in the current snapshot,
// checks the arguments against the tool's inputSchema, calls the backend
// method the manifest names with the arguments unchanged, and maps the
// outcome to a result. Only an unknown tool is an error (wrapping
// protocol.ErrInvalidParams); everything that goes wrong while running the
// tool is a result with IsError set and a message a model can act on.
// The whole call, checks included, is bounded by the call timeout and
// ctx. It finishes against the snapshot it started with, whatever reloads
// happen meanwhile. Every call, an unknown tool's included, is recorded
// in the audit log when there is one.
func (r *Registry) CallTool(ctx context.Context, call *protocol.Call, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return r.callTool(ctx, call, req, r.Snapshot)
}

// callTool is CallTool in the snapshot current returns: the registry's,
// or a client's view of it.
func (r *Registry) callTool(ctx context.Context, call *protocol.Call, req *protocol.CallToolRequest, current func() *Snapshot) (*protocol.CallToolResult, error) {
	start := time.Now()
	r.started(call, audit.KindTool, req.Name, start)
	if res := r.waitLoaded(ctx); res != nil {
		r.record(call, req, start, called{res: res, outcome: outcomeCancelled})
		return res, nil
	}
	snap := current()
	e, ok := snap.Lookup(req.Name)
	if !ok {
		r.record(call, req, start, called{args: objectArgs(req.Arguments), outcome: notServed(snap, req.Name)})
		return nil, fmt.Errorf("%w: unknown tool %q", protocol.ErrInvalidParams, req.Name)
	}
	// The call's own time: not the time it waits for the user.
	ctx, cancel := call.WithTimeout(ctx, r.timeoutOf(call))
	defer cancel()
	args := objectArgs(req.Arguments)
	c := r.run(ctx, call, snap, e, args)
	if c.err != nil { // the question goes out in the result (2026-07-28)
		r.record(call, req, start, c)
		return nil, c.err
	}
	ev := r.log.Debug()
	if c.res.IsError {
		ev = r.log.Info()
	}
	ev.Str("tool", e.Name).Str("backend_method", e.Method).Dur("dur", time.Since(start)).Str("outcome", c.outcome).Msg("tool call")
	r.record(call, req, start, c)
	return c.res, nil
}

// objectArgs returns a call's arguments, none or null meaning {}.
func objectArgs(args jsontext.Value) jsontext.Value {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		return jsontext.Value("{}")
	}
	return args
}

// waitLoaded waits for the first load. It returns nil once it is done,
// or the result to answer when ctx ends first.
func (r *Registry) waitLoaded(ctx context.Context) *protocol.CallToolResult {
	select {
	case <-r.loaded:
		return nil
	case <-ctx.Done():
		return protocol.TextResult("The call was cancelled while the manifests were loading.", true)
	}
}

// run runs a tool and returns what its record says: its result, the
// outcome, the backend's error when it returned one, what the user was
// asked; or, in err, protocol.ErrInputRequired, when the question goes
// out in the result instead.
func (r *Registry) run(ctx context.Context, call *protocol.Call, snap *Snapshot, e *Entry, args jsontext.Value) called {
	c := called{entry: e, args: args}
	schemas, err := e.schemas()
	if err != nil {
		// Parse compiled these schemas before the tool was served.
		c.res, c.outcome = protocol.TextResult(fmt.Sprintf("The tool's schemas do not compile: %v", err), true), outcomeFailed
		return c
	}
	if c.res, c.outcome = r.checkArguments(ctx, call, e, schemas.in, args); c.res != nil {
		return c
	}
	if c.res, c.outcome, c.asked, c.err = r.confirm(ctx, call, snap.rules.denyUnasked(), e, args); c.res != nil || c.err != nil {
		return c
	}
	if r.opts.Backend == nil {
		c.res, c.outcome = protocol.TextResult("No backend is configured for this bridge.", true), outcomeUnavailable
		return c
	}
	r.log.Trace().Str("tool", e.Name).RawJSON("arguments", args).Msg("backend request")
	result, err := r.callBackend(ctx, call, e.Method, args)
	if err != nil {
		c.res, c.outcome = r.failure(ctx, call, e, err)
		c.backendErr = err
		return c
	}
	r.log.Trace().Str("tool", e.Name).RawJSON("result", result).Msg("backend result")
	c.res, c.outcome = r.success(ctx, call, e, schemas.out, result)
	return c
}

// callBackend calls method with params for call, within its principal's
// fair share of the backend's connections: while other principals wait,
// one holds at most its share, and a connection that comes free goes to
// the next in turn.
func (r *Registry) callBackend(ctx context.Context, call *protocol.Call, method string, params jsontext.Value) (jsontext.Value, error) {
	who := call.Principal()
	if err := r.connections.Acquire(ctx, who); err != nil {
		return nil, fmt.Errorf("waiting for a free backend connection: %w", err)
	}
	defer r.connections.Release(who)
	return r.opts.Backend.Call(ctx, method, params, backendCall{call})
}

// checkArguments checks a call's arguments against the tool's input
// schema; it returns nil when they pass, else the result to answer.
func (r *Registry) checkArguments(ctx context.Context, call *protocol.Call, e *Entry, input *manifest.Schema, args jsontext.Value) (*protocol.CallToolResult, string) {
	switch vs, err := r.checkValue(ctx, input, args); {
	case ctx.Err() != nil:
		return r.stopped(ctx, call, e, "while its arguments were checked")
	case err != nil:
		outcome := outcomeInvalidArguments
		if errors.As(err, new(*manifest.LimitError)) {
			outcome = outcomeRefused
		}
		return protocol.TextResult(fmt.Sprintf("Invalid arguments for %s: %s. Nothing was sent to the backend.", e.Name, r.describeDecodeError(err)), true), outcome
	case len(vs) > 0:
		return protocol.TextResult(fmt.Sprintf("Invalid arguments for %s; nothing was sent to the backend. Fix these and call again:\n%s",
			e.Name, describeViolations(vs, "arguments")), true), outcomeInvalidArguments
	}
	return nil, ""
}

// largeCheck is the size past which a value's check takes one of the
// registry's few slots for large checks.
const largeCheck = 64 << 10

// checkValue checks a value against s within the limits. The check of a
// large value, whose decoded form may hold tens of times its size, waits
// for one of a slot per processor, which it would keep busy anyway: calls
// with large values at once do not multiply that memory.
func (r *Registry) checkValue(ctx context.Context, s *manifest.Schema, value jsontext.Value) ([]manifest.Violation, error) {
	if len(value) > largeCheck {
		select {
		case r.largeChecks <- struct{}{}:
			defer func() { <-r.largeChecks }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Check(ctx, r.decoder, value)
}

// describeDecodeError says why a value could not be checked.
func (r *Registry) describeDecodeError(err error) string {
	var le *manifest.LimitError
	if !errors.As(err, &le) {
		return fmt.Sprintf("not valid JSON (%v)", err)
	}
	if h := r.opts.Hints.Limits[le.Limit]; h != "" {
		return fmt.Sprintf("the value %s (the bridge's limit, %s)", le.Error(), h)
	}
	return "the value " + le.Error()
}

// Bounds of what a model is told about violations, and of what is logged.
const (
	maxReportedViolations = 20
	maxViolationText      = 300
)

func describeViolations(vs []manifest.Violation, root string) string {
	var b strings.Builder
	for i, v := range vs {
		if i == maxReportedViolations {
			fmt.Fprintf(&b, "- … and %d more\n", len(vs)-i)
			break
		}
		fmt.Fprintf(&b, "- %s: %s\n", safetext.Cut(violationPath(v, root), maxViolationText), safetext.Cut(v.Message, maxViolationText))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// violationsForLog names each violation by path and keyword only, each
// path a field of a log line: the values are user data and may be huge.
func violationsForLog(vs []manifest.Violation, root string) []string {
	out := make([]string, 0, min(len(vs), maxReportedViolations))
	for _, v := range vs[:min(len(vs), maxReportedViolations)] {
		out = append(out, safetext.Field(violationPath(v, root), maxViolationText)+" ("+v.Keyword+")")
	}
	return out
}

func violationPath(v manifest.Violation, root string) string {
	switch path := v.Path(); {
	case path == "":
		return root
	case strings.HasPrefix(path, "["):
		return root + path
	default:
		return root + "." + path
	}
}

// timeoutOf returns how long call may take of its own time: the task
// timeout for a call that runs as a task, or may become one, else the
// call timeout.
func (r *Registry) timeoutOf(call *protocol.Call) time.Duration {
	if call.InTask() {
		return r.opts.TaskTimeout
	}
	return r.opts.CallTimeout
}

// stopped maps a call whose context ended before the backend was called.
func (r *Registry) stopped(ctx context.Context, call *protocol.Call, e *Entry, when string) (*protocol.CallToolResult, string) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		timeout := r.timeoutOf(call)
		r.log.Warn().Str("tool", e.Name).Dur("timeout", timeout).Msg("call timed out " + when)
		return protocol.TextResult(fmt.Sprintf("The call to %s took longer than %s %s; nothing was sent to the backend.", e.Name, timeout, when), true), outcomeTimeout
	}
	return protocol.TextResult("The call was cancelled.", true), outcomeCancelled
}

// success maps a backend result: the JSON as text, plus structured
// content when it is an object, both from the one copy of the bytes
// read, checked against the outputSchema when the tool declares one.
func (r *Registry) success(ctx context.Context, call *protocol.Call, e *Entry, output *manifest.Schema, result jsontext.Value) (*protocol.CallToolResult, string) {
	if output != nil {
		vs, err := r.checkValue(ctx, output, result)
		switch {
		case ctx.Err() != nil:
			return r.stopped(ctx, call, e, "while its result was checked")
		case err != nil:
			r.log.Warn().Str("tool", e.Name).Str("backend_method", e.Method).Err(err).Msg("backend result cannot be checked against outputSchema")
			return protocol.TextResult(fmt.Sprintf("The backend's result for %s cannot be checked against the tool's outputSchema: %s. It is not passed on as valid.",
				e.Name, r.describeDecodeError(err)), true), outcomeContractBroken
		case len(vs) > 0:
			detail := describeViolations(vs, "result")
			r.log.Warn().Str("tool", e.Name).Str("backend_method", e.Method).Strs("violations", violationsForLog(vs, "result")).Msg("backend result does not match outputSchema")
			tellClient(call, fmt.Sprintf("backend result of %s does not match the tool's outputSchema:\n%s", e.Method, detail))
			return protocol.TextResult(fmt.Sprintf("The backend broke its contract: its result for %s does not match the tool's outputSchema, so it is not passed on as valid.\n%s",
				e.Name, detail), true), outcomeContractBroken
		}
	}
	if result.Kind() == '"' {
		// A string is text: the model reads it as the backend wrote it,
		// not quoted.
		var text string
		if json.Unmarshal(result, &text) == nil {
			return protocol.TextResult(text, false), outcomeOK
		}
	}
	return protocol.JSONResult(result), outcomeOK
}

// failure maps a backend failure to a result a model can act on.
func (r *Registry) failure(ctx context.Context, call *protocol.Call, e *Entry, err error) (*protocol.CallToolResult, string) {
	msg, outcome := r.backendFailure(ctx, call, "tool", e.Name, e.Method, "call the tool again", err)
	return protocol.TextResult(msg, true), outcome
}

// backendFailure says what went wrong calling method for the item a
// client asked for (a tool, a resource), in words a model can act on,
// logs it where a person should know, and tells the client of call when
// it asked for warnings. kind and name name the item in the log; again
// says what to do once the backend runs.
func (r *Registry) backendFailure(ctx context.Context, call *protocol.Call, kind, name, method, again string, err error) (msg, outcome string) {
	addr := r.opts.BackendAddr
	var rpcErr *socketclient.RPCError
	switch {
	case errors.As(err, &rpcErr):
		msg := fmt.Sprintf("The backend returned error %d for %s: %s", rpcErr.Code, method, rpcErr.Message)
		if d := bytes.TrimSpace(rpcErr.Data); len(d) > 0 && string(d) != "null" {
			msg += "\nDetails: " + safetext.Cut(string(d), maxDetails)
		}
		return msg, outcomeBackendError
	case errors.Is(ctx.Err(), context.Canceled):
		// The client cancelled the request; no one will read this.
		return "The call was cancelled.", outcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		timeout := r.timeoutOf(call)
		r.log.Warn().Str(kind, name).Str("backend_method", method).Dur("timeout", timeout).Msg("backend call timed out")
		tellClient(call, fmt.Sprintf("backend call %s timed out after %s", method, timeout))
		return fmt.Sprintf("The backend did not answer %s within %s; it may be busy or hung. The operation may still complete. Try again later, or check the backend at %s.",
			method, timeout, addr), outcomeTimeout
	case errors.Is(err, socketclient.ErrUnavailable):
		r.log.Warn().Err(err).Str(kind, name).Str("socket", addr).Msg("backend unavailable")
		tellClient(call, "backend unavailable: "+err.Error())
		start := "Start it"
		if h := r.opts.Hints.Backend; h != "" {
			start += " (or " + h + ")"
		}
		return fmt.Sprintf("The Tairseach backend is not reachable (%v). %s, then %s.", err, start, again), outcomeUnavailable
	case errors.Is(err, socketclient.ErrBusy):
		r.log.Warn().Err(err).Str(kind, name).Str("socket", addr).Msg("backend busy")
		tellClient(call, "backend busy: "+err.Error())
		return fmt.Sprintf("The Tairseach backend is running but busy (%v). Nothing was sent to it; %s in a moment.", err, again), outcomeBusy
	case errors.Is(err, socketclient.ErrBadReply):
		r.log.Warn().Err(err).Str(kind, name).Str("backend_method", method).Msg("bad backend reply")
		tellClient(call, "bad backend reply: "+err.Error())
		return fmt.Sprintf("The backend sent an invalid reply to %s (%v); the operation may or may not have taken effect. Check the backend's logs.",
			method, err), outcomeBadReply
	default:
		r.log.Warn().Err(err).Str(kind, name).Str("backend_method", method).Msg("backend call failed")
		return fmt.Sprintf("Calling the backend for %s failed: %v", method, err), outcomeFailed
	}
}

// maxDetails bounds the bytes of a backend error's data passed on to a
// model.
const maxDetails = 2048

// tellClient sends backend trouble to the client whose call met it, when
// that client asked for warnings: by logging/setLevel in the legacy era,
// by the request's own logLevel in the modern one.
func tellClient(call *protocol.Call, msg string) {
	call.Log(protocol.LevelWarning, "tairseach-mcp", msg)
}
