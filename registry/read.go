package registry

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// outcomeNotFound is the outcome of a read of a URI, or a prompt, that
// the bridge does not serve (a call's is outcomeUnknownTool).
const outcomeNotFound = "not_found"

// aRead is what a read did, for the logs: how it went, the backend method
// it called (if any) and the backend's error when it returned one, the
// template the URI matched (if any) with its variables, and the size of
// the contents.
type aRead struct {
	outcome, method string
	backendErr      error
	template        *TemplateEntry
	vars            map[string]string
	bytesOut        int
}

// Resources returns the resources and templates clients see, waiting for
// the first load; part of protocol.ResourceProvider.
func (r *Registry) Resources() *protocol.ResourceSet {
	<-r.loaded
	return r.snap.Load().resources
}

// ReadResource reads the resource at a URI: a served resource's, or one
// that matches a served template (the first, in the order clients see
// them). A resource's contents come from its backend method, its file or
// its text; a template's from its method, called with its fixed params and
// each variable, once they pass the template's schema. Everything that
// goes wrong is an error (resources/read has no error result): an unknown
// URI wraps protocol.ErrResourceNotFound, variables that fail the schema
// protocol.ErrInvalidParams, and the rest is a *protocol.Error with
// CodeInternalError whose message says what happened, as a tool's result
// would. The read is bounded by the call timeout and ctx, and finishes
// against the snapshot it started with; part of protocol.ResourceProvider.
func (r *Registry) ReadResource(ctx context.Context, call *protocol.Call, req *protocol.ReadResourceRequest) (*protocol.ReadResourceResult, error) {
	return r.readResource(ctx, call, req, r.Snapshot)
}

// readResource is ReadResource in the snapshot current returns.
func (r *Registry) readResource(ctx context.Context, call *protocol.Call, req *protocol.ReadResourceRequest, current func() *Snapshot) (*protocol.ReadResourceResult, error) {
	if err := r.waitLoadedErr(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	r.started(call, audit.KindResource, req.URI, start)
	ctx, cancel := call.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	snap := current()
	contents, did, err := r.read(ctx, call, snap, req.URI)
	ev := r.log.Debug()
	if err != nil && did.outcome != outcomeNotFound {
		ev = r.log.Info()
	}
	ev.Str("uri", logURI(req.URI)).Str("backend_method", did.method).Dur("dur", time.Since(start)).Str("outcome", did.outcome).Msg("resource read")
	if did.outcome == outcomeNotFound && snap.filtered("resource", req.URI) {
		did.outcome = outcomeRefused
	}
	r.recordRead(call, req, start, did)
	if err != nil {
		return nil, err
	}
	return &protocol.ReadResourceResult{Contents: contents}, nil
}

// waitLoadedErr waits for the first load; it returns the error to
// answer when ctx ends first.
func (r *Registry) waitLoadedErr(ctx context.Context) error {
	select {
	case <-r.loaded:
		return nil
	case <-ctx.Done():
		return r.stoppedErr(ctx, "while the manifests were loading")
	}
}

// stoppedErr is the error of a read (or prompt, or completion) whose
// context ended, when.
func (r *Registry) stoppedErr(ctx context.Context, when string) error {
	msg := "The request was cancelled " + when + "."
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = fmt.Sprintf("The request took longer than %s %s.", r.opts.CallTimeout, when)
	}
	return &protocol.Error{Code: protocol.CodeInternalError, Message: msg}
}

// read reads uri in snap for call, counting what it reads (a backend's
// reply, a file) with call's Grow, and says what it did.
func (r *Registry) read(ctx context.Context, call *protocol.Call, snap *Snapshot, uri string) (contents []protocol.ResourceContents, did aRead, err error) {
	defer func() {
		for _, c := range contents {
			did.bytesOut += len(c.Text) + len(c.TextBytes) + len(c.Blob)
		}
	}()
	if e, ok := snap.byURI[uri]; ok {
		res := e.Resource
		switch {
		case res.Text != nil:
			return []protocol.ResourceContents{{URI: uri, MIMEType: cmp.Or(res.MIMEType, "text/plain"), Text: *res.Text}}, aRead{outcome: outcomeOK}, nil
		case res.File != "":
			contents, outcome, err := r.readFile(ctx, call, e)
			return contents, aRead{outcome: outcome}, err
		}
		did.method = res.Method
		contents, err := r.callForContents(ctx, call, uri, res.MIMEType, objectArgs(res.Params), &did)
		return contents, did, err
	}
	for _, e := range snap.Templates {
		vars, ok := e.Template.Template.Match(uri)
		if !ok {
			continue
		}
		t := e.Template
		did = aRead{method: t.Method, template: e, vars: vars}
		if err := r.checkVariables(ctx, e, vars); err != nil {
			did.outcome = outcomeInvalidArguments
			return nil, did, err
		}
		params, err := templateParams(t.Params, vars)
		if err != nil {
			did.outcome = outcomeFailed
			return nil, did, &protocol.Error{Code: protocol.CodeInternalError, Message: err.Error()}
		}
		contents, err := r.callForContents(ctx, call, uri, t.MIMEType, params, &did)
		return contents, did, err
	}
	return nil, aRead{outcome: outcomeNotFound}, fmt.Errorf("%w: %s", protocol.ErrResourceNotFound, logURI(uri))
}

// checkVariables checks a template's variables against its schema.
func (r *Registry) checkVariables(ctx context.Context, e *TemplateEntry, vars map[string]string) error {
	schema, err := e.schema()
	if err != nil || schema == nil {
		return err // Parse compiled it before the template was served
	}
	doc, _ := json.Marshal(vars, json.Deterministic(true))
	switch vs, err := r.checkValue(ctx, schema, doc); {
	case ctx.Err() != nil:
		return r.stoppedErr(ctx, "while its variables were checked")
	case err != nil:
		return fmt.Errorf("%w: the URI's variables cannot be checked: %s", protocol.ErrInvalidParams, r.describeDecodeError(err))
	case len(vs) > 0:
		return fmt.Errorf("%w: the URI does not fit %s; nothing was sent to the backend:\n%s",
			protocol.ErrInvalidParams, e.Template.URITemplate, describeViolations(vs, "variables"))
	}
	return nil
}

// templateParams returns a template's fixed params with each variable
// added as a string member of its name, in a stable order.
func templateParams(fixed jsontext.Value, vars map[string]string) (jsontext.Value, error) {
	members := map[string]jsontext.Value{}
	if fixed != nil {
		if err := json.Unmarshal(fixed, &members); err != nil {
			return nil, fmt.Errorf("the template's params: %w", err)
		}
	}
	for name, v := range vars {
		members[name], _ = json.Marshal(v)
	}
	return json.Marshal(members, json.Deterministic(true))
}

// callForContents calls did.method with params and maps its result to
// the contents of the resource at uri, whose declared MIME type is mime;
// it says in did how that went.
func (r *Registry) callForContents(ctx context.Context, call *protocol.Call, uri, mime string, params jsontext.Value, did *aRead) ([]protocol.ResourceContents, error) {
	method := did.method
	if r.opts.Backend == nil {
		did.outcome = outcomeUnavailable
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: "No backend is configured for this bridge."}
	}
	r.log.Trace().Str("uri", logURI(uri)).RawJSON("params", params).Msg("backend request")
	result, err := r.callBackend(ctx, call, method, params)
	if err != nil {
		var msg string
		msg, did.outcome = r.backendFailure(ctx, call, "uri", logURI(uri), method, "read the resource again", err)
		did.backendErr = err
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: msg}
	}
	r.log.Trace().Str("uri", logURI(uri)).RawJSON("result", result).Msg("backend result")
	c, err := resultContents(uri, mime, result)
	if err != nil {
		r.log.Warn().Err(err).Str("uri", logURI(uri)).Str("backend_method", method).Msg("backend result is not resource contents")
		did.outcome = outcomeContractBroken
		return nil, &protocol.Error{Code: protocol.CodeInternalError,
			Message: fmt.Sprintf("The backend's result for %s is not resource contents: %v", method, err)}
	}
	did.outcome = outcomeOK
	return []protocol.ResourceContents{c}, nil
}

// resultContents maps a backend result to contents predictably: a string
// is text (of the declared type, else text/plain); an object with a
// string "text" or "blob" (base64) and at most a "mimeType" besides is
// passed through; anything else is its JSON, as application/json text.
func resultContents(uri, mime string, result jsontext.Value) (protocol.ResourceContents, error) {
	c := protocol.ResourceContents{URI: uri}
	switch result.Kind() {
	case '"':
		c.MIMEType = cmp.Or(mime, "text/plain")
		err := json.Unmarshal(result, &c.Text)
		return c, err
	case '{':
		var shaped map[string]jsontext.Value
		if json.Unmarshal(result, &shaped) == nil && isContentsShape(shaped) {
			var blob string
			err := errors.Join(
				unmarshalIf(shaped["text"], &c.Text),
				unmarshalIf(shaped["blob"], &blob),
				unmarshalIf(shaped["mimeType"], &c.MIMEType))
			if err != nil {
				return c, err
			}
			if shaped["blob"] != nil {
				if c.Blob, err = base64.StdEncoding.DecodeString(blob); err != nil {
					return c, fmt.Errorf("its blob is not base64: %w", err)
				}
				c.MIMEType = cmp.Or(c.MIMEType, mime, "application/octet-stream")
			} else {
				c.MIMEType = cmp.Or(c.MIMEType, mime, "text/plain")
			}
			return c, nil
		}
	}
	c.MIMEType, c.TextBytes = "application/json", result
	return c, nil
}

// isContentsShape reports whether an object is {"text"|"blob", "mimeType"?}
// with string members.
func isContentsShape(m map[string]jsontext.Value) bool {
	_, text := m["text"]
	_, blob := m["blob"]
	if text == blob || len(m) > 2 || len(m) == 2 && m["mimeType"] == nil {
		return false
	}
	for _, v := range m {
		if v.Kind() != '"' {
			return false
		}
	}
	return true
}

func unmarshalIf(v jsontext.Value, into *string) error {
	if v == nil {
		return nil
	}
	return json.Unmarshal(v, into)
}

// readFile reads a file resource: the last maxBytes of it, counted with
// call's Grow before they are read.
func (r *Registry) readFile(ctx context.Context, call *protocol.Call, e *ResourceEntry) ([]protocol.ResourceContents, string, error) {
	res := e.Resource
	path := resolvePath(res.File, filepath.Dir(e.File))
	limit := res.MaxBytes
	if limit <= 0 {
		limit = manifest.DefaultMaxBytes
	}
	counted := int64(0)
	if fi, err := os.Stat(path); err == nil {
		counted = min(limit, fi.Size())
		if err := call.Grow(ctx, int(counted)); err != nil {
			return nil, outcomeCancelled, r.stoppedErr(ctx, "while waiting for room to read its file")
		}
	}
	data, size, err := manifest.ReadTail(path, limit)
	if grew := int64(len(data)) - counted; err == nil && grew > 0 {
		_ = call.Grow(ctx, int(grew)) // the file grew since the stat; a read that ends now is answered all the same
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, outcomeNotFound, fmt.Errorf("%w: %s: its file %s does not exist", protocol.ErrResourceNotFound, res.URI, path)
	case err != nil:
		r.log.Warn().Err(err).Str("uri", logURI(res.URI)).Msg("cannot read the file of a resource")
		return nil, outcomeFailed, &protocol.Error{Code: protocol.CodeInternalError, Message: fmt.Sprintf("Cannot read the file of %s: %v", res.URI, err)}
	}
	return []protocol.ResourceContents{fileContents(res.URI, res.MIMEType, data, size > int64(len(data)))}, outcomeOK, nil
}

// resolvePath returns the path a file resource names: as it is when
// absolute, in the home folder when it starts with ~/, else relative to
// the folder of its manifest.
func resolvePath(file, manifestDir string) string {
	if rest, ok := strings.CutPrefix(file, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(manifestDir, file)
}

// fileContents returns a file's bytes as text when they are UTF-8 and its
// declared type is not a binary one, else as a blob. The tail of a file
// that was cut starts at its first whole line, as a log is read.
func fileContents(uri, mime string, data []byte, cut bool) protocol.ResourceContents {
	if cut && textual(mime) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i < len(data)-1 {
			data = data[i+1:]
		}
		for len(data) > 0 && !utf8.RuneStart(data[0]) {
			data = data[1:]
		}
	}
	if textual(mime) && utf8.Valid(data) {
		return protocol.ResourceContents{URI: uri, MIMEType: cmp.Or(mime, "text/plain"), TextBytes: data}
	}
	return protocol.ResourceContents{URI: uri, MIMEType: cmp.Or(mime, "application/octet-stream"), Blob: data}
}

// textual reports whether a declared MIME type may be sent as text: none
// declared, text/*, or JSON, XML, YAML, JavaScript.
func textual(mime string) bool {
	if mime == "" || strings.HasPrefix(mime, "text/") {
		return true
	}
	mime, _, _ = strings.Cut(mime, ";")
	return slices.ContainsFunc([]string{"json", "xml", "yaml", "javascript", "x-ndjson"}, func(s string) bool {
		return strings.HasSuffix(mime, "/"+s) || strings.HasSuffix(mime, "+"+s)
	})
}

// logURI returns a client's URI fit for a log line and a message: a field
// of one line, at most 200 bytes.
func logURI(uri string) string { return safetext.Field(uri, 200) }
