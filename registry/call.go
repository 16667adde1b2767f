package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// Outcomes of a call, as logged in the outcome field.
const (
	outcomeOK               = "ok"
	outcomeInvalidArguments = "invalid_arguments"
	outcomeBackendError     = "backend_error"
	outcomeUnavailable      = "unavailable"
	outcomeTimeout          = "timeout"
	outcomeCancelled        = "cancelled"
	outcomeBadReply         = "bad_reply"
	outcomeContractBroken   = "contract_broken"
	outcomeFailed           = "failed"
)

// maxReportedViolations bounds the argument problems listed to a model.
const maxReportedViolations = 20

// CallTool runs a tool: it looks the name up in the current snapshot,
// checks the arguments against the tool's inputSchema, calls the backend
// method the manifest names with the arguments unchanged, and maps the
// outcome to a result. Only an unknown tool is an error (wrapping
// protocol.ErrInvalidParams); everything that goes wrong while running the
// tool is a result with IsError set and a message a model can act on.
// The call finishes against the snapshot it started with, whatever
// reloads happen meanwhile.
func (r *Registry) CallTool(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	select {
	case <-r.loaded: // the usual case, without asking ctx for a channel
	default:
		select {
		case <-r.loaded:
		case <-ctx.Done():
			return protocol.TextResult("The call was cancelled while the manifests were loading.", true), nil
		}
	}
	e, ok := r.snap.Load().Lookup(req.Name)
	if !ok {
		return nil, fmt.Errorf("%w: unknown tool %q", protocol.ErrInvalidParams, req.Name)
	}
	return r.call(ctx, e, json.RawMessage(req.Arguments)), nil
}

func (r *Registry) call(ctx context.Context, e *Entry, args json.RawMessage) *protocol.CallToolResult {
	start := time.Now()
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		args = json.RawMessage("{}")
	}
	res, outcome := r.run(ctx, e, args)
	ev := r.log.Debug()
	if res.IsError {
		ev = r.log.Info()
	}
	ev.Str("tool", e.Name).Str("backend_method", e.Method).Dur("dur", time.Since(start)).Str("outcome", outcome).Msg("tool call")
	return res
}

func (r *Registry) run(ctx context.Context, e *Entry, args json.RawMessage) (*protocol.CallToolResult, string) {
	schemas, err := e.schemas()
	if err != nil {
		// Parse compiled these schemas before the tool was served.
		return protocol.TextResult(fmt.Sprintf("The tool's schemas do not compile: %v", err), true), outcomeFailed
	}
	if msg := checkArguments(e.Name, schemas.in, args); msg != "" {
		return protocol.TextResult(msg, true), outcomeInvalidArguments
	}
	if r.opts.Backend == nil {
		return protocol.TextResult("No backend is configured for this bridge.", true), outcomeUnavailable
	}
	r.log.Trace().Str("tool", e.Name).RawJSON("arguments", args).Msg("backend request")
	result, err := r.callBackend(ctx, e.Method, args)
	if err != nil {
		return r.failure(ctx, e, err)
	}
	// JSON on the wire must be UTF-8, and the result goes out twice, raw
	// as structuredContent and as text: cleaned once here, the copies
	// agree. A valid result, the usual case, is not copied.
	result = jsonscan.ValidUTF8(result)
	r.log.Trace().Str("tool", e.Name).RawJSON("result", result).Msg("backend result")
	return r.success(ctx, e, schemas.out, result)
}

// callBackend calls the backend, bounded by the call timeout.
func (r *Registry) callBackend(ctx context.Context, method string, args json.RawMessage) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	res, err := r.opts.Backend.Call(ctx, method, jsontext.Value(args))
	return json.RawMessage(res), err
}

// checkArguments validates args against the tool's input schema and
// returns a message naming every failing path, or "" when they conform.
func checkArguments(tool string, input *jsonschema.Schema, args json.RawMessage) string {
	v, err := manifest.DecodeValue(args)
	if err != nil {
		return fmt.Sprintf("Invalid arguments for %s: not valid JSON (%v). Nothing was sent to the backend.", tool, err)
	}
	if err := manifest.Validate(input, v); err != nil {
		return fmt.Sprintf("Invalid arguments for %s; nothing was sent to the backend. Fix these and call again:\n%s",
			tool, describeViolations(manifest.Violations(err), "arguments"))
	}
	return ""
}

func describeViolations(vs []manifest.Violation, root string) string {
	var b strings.Builder
	for i, v := range vs {
		if i == maxReportedViolations {
			fmt.Fprintf(&b, "- … and %d more\n", len(vs)-i)
			break
		}
		path := v.Path()
		if path == "" {
			path = root
		} else {
			path = root + pathJoiner(path) + path
		}
		fmt.Fprintf(&b, "- %s: %s\n", path, v.Message)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func pathJoiner(path string) string {
	if strings.HasPrefix(path, "[") {
		return ""
	}
	return "."
}

// success maps a backend result: the JSON as text, plus structured
// content when it is an object, checked against the outputSchema when
// the tool declares one.
func (r *Registry) success(ctx context.Context, e *Entry, output *jsonschema.Schema, result json.RawMessage) (*protocol.CallToolResult, string) {
	isObject := len(result) > 0 && firstByte(result) == '{'
	if output != nil {
		v, err := manifest.DecodeValue(result)
		if err == nil {
			err = manifest.Validate(output, v)
		}
		if err != nil {
			detail := describeViolations(manifest.Violations(err), "result")
			r.log.Warn().Str("tool", e.Name).Str("backend_method", e.Method).Str("violations", detail).Msg("backend result does not match outputSchema")
			tellClient(ctx, fmt.Sprintf("backend result of %s does not match the tool's outputSchema:\n%s", e.Method, detail))
			return protocol.TextResult(fmt.Sprintf("The backend broke its contract: its result for %s does not match the tool's outputSchema, so it is not passed on as valid.\n%s",
				e.Name, detail), true), outcomeContractBroken
		}
	}
	res := protocol.TextResult(string(result), false)
	if isObject {
		res.StructuredContent = jsontext.Value(result)
	}
	return res, outcomeOK
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// failure maps a backend failure to a result a model can act on.
func (r *Registry) failure(ctx context.Context, e *Entry, err error) (*protocol.CallToolResult, string) {
	addr := r.opts.BackendAddr
	var rpcErr *socketclient.RPCError
	switch {
	case errors.As(err, &rpcErr):
		msg := fmt.Sprintf("The backend returned error %d for %s: %s", rpcErr.Code, e.Method, rpcErr.Message)
		if d := bytes.TrimSpace(rpcErr.Data); len(d) > 0 && string(d) != "null" {
			d = jsonscan.ValidUTF8(d)
			if len(d) > maxDetails {
				// Cut at a character's start, so none is cut in half.
				cut := maxDetails
				for cut > 0 && !utf8.RuneStart(d[cut]) {
					cut--
				}
				d = append(d[:cut:cut], "…"...)
			}
			msg += "\nDetails: " + string(d)
		}
		// The message is the backend's too, from any Caller.
		if !utf8.ValidString(msg) {
			msg = string(jsonscan.ValidUTF8([]byte(msg)))
		}
		return protocol.TextResult(msg, true), outcomeBackendError
	case ctx.Err() != nil:
		// The client cancelled the request; no one will read this.
		return protocol.TextResult("The call was cancelled.", true), outcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		r.log.Warn().Str("tool", e.Name).Str("backend_method", e.Method).Dur("timeout", r.opts.CallTimeout).Msg("backend call timed out")
		tellClient(ctx, fmt.Sprintf("backend call %s timed out after %s", e.Method, r.opts.CallTimeout))
		return protocol.TextResult(fmt.Sprintf("The backend did not answer %s within %s; it may be busy or hung. The operation may still complete. Try again later, or check the backend at %s.",
			e.Method, r.opts.CallTimeout, addr), true), outcomeTimeout
	case errors.Is(err, socketclient.ErrUnavailable):
		r.log.Warn().Err(err).Str("tool", e.Name).Str("socket", addr).Msg("backend unavailable")
		tellClient(ctx, "backend unavailable: "+err.Error())
		return protocol.TextResult(fmt.Sprintf("The Tairseach backend is not reachable (%v). Is the backend running at %s? Start it (or fix --socket), then call the tool again.",
			err, addr), true), outcomeUnavailable
	case errors.Is(err, socketclient.ErrBadReply):
		r.log.Warn().Err(err).Str("tool", e.Name).Str("backend_method", e.Method).Msg("bad backend reply")
		tellClient(ctx, "bad backend reply: "+err.Error())
		return protocol.TextResult(fmt.Sprintf("The backend sent an invalid reply to %s (%v); the operation may or may not have taken effect. Check the backend's logs.",
			e.Method, err), true), outcomeBadReply
	default:
		r.log.Warn().Err(err).Str("tool", e.Name).Str("backend_method", e.Method).Msg("backend call failed")
		return protocol.TextResult(fmt.Sprintf("Calling the backend for %s failed: %v", e.Method, err), true), outcomeFailed
	}
}

// maxDetails bounds the bytes of a backend error's data passed on to a
// model.
const maxDetails = 2048

// tellClient sends backend trouble to the client whose call met it, when
// that client asked for warnings: by logging/setLevel in the legacy era,
// by the request's own logLevel in the modern one.
func tellClient(ctx context.Context, msg string) {
	protocol.ClientLog(ctx, protocol.LevelWarning, "tairseach-mcp", msg)
}
