package protocol

import (
	"bufio"
	"errors"
	"strings"

	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
	"strconv"
	"time"
)

// params is the union of the params of every method the server handles,
// decoded once per request.
type params struct {
	Meta *requestMeta `json:"_meta"`

	// initialize
	ProtocolVersion *string         `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
	// tools/call, prompts/get
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// tools/list and other list methods
	Cursor *string `json:"cursor"`
	// logging/setLevel
	Level *string `json:"level"`
	// resources/read
	URI *string `json:"uri"`
	// notifications/cancelled
	RequestID json.RawMessage `json:"requestId"`
	// subscriptions/listen
	Notifications *subscriptionFilter `json:"notifications"`
}

// decode fills p from a params object in one pass:
// large members such as arguments are kept as sub-slices, never decoded.
func (p *params) decode(obj []byte) error {
	var err error
	str := func(key string, v []byte) *string {
		switch v[0] {
		case '"':
			s := jsonscan.Unquote(v)
			return &s
		case 'n':
			return nil
		}
		err = fmt.Errorf("%q must be a string, not %s", key, kindOf(v))
		return nil
	}
	raw := func(v []byte) json.RawMessage {
		if string(v) == "null" {
			return nil
		}
		return v
	}
	jerr := jsonscan.Object(obj, func(rawKey, v []byte) error {
		// Switching on the converted name does not allocate it.
		switch string(jsonscan.Name(rawKey)) {
		case "_meta":
			if string(v) != "null" {
				if e := json.Unmarshal(v, &p.Meta); e != nil {
					err = fmt.Errorf("_meta: %s", describeDecodeError(e, `"_meta" must be an object`))
				}
			}
		case "protocolVersion":
			p.ProtocolVersion = str("protocolVersion", v)
		case "capabilities":
			p.Capabilities = raw(v)
		case "clientInfo":
			p.ClientInfo = raw(v)
		case "name":
			p.Name = str("name", v)
		case "arguments":
			p.Arguments = raw(v)
		case "cursor":
			p.Cursor = str("cursor", v)
		case "level":
			p.Level = str("level", v)
		case "uri":
			p.URI = str("uri", v)
		case "requestId":
			p.RequestID = raw(v)
		case "notifications":
			if string(v) != "null" {
				if e := json.Unmarshal(v, &p.Notifications); e != nil {
					err = fmt.Errorf("notifications: %s", describeDecodeError(e, `"notifications" must be an object`))
				}
			}
		}
		return err
	})
	if errors.Is(jerr, jsonscan.ErrNotObject) {
		return errors.New("params must be an object")
	}
	return jerr
}

// requestMeta is the _meta object of a request.
type requestMeta struct {
	ProgressToken      json.RawMessage `json:"progressToken"`
	ProtocolVersion    *string         `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	LogLevel           *string         `json:"io.modelcontextprotocol/logLevel"`
}

// reqContext is what a handler knows about the request beyond its params.
type reqContext struct {
	p       params
	version string // protocol version in force for this request
	shape   shape
	modern  bool
	// logLevel is the modern per-request minimum log level, when logEnabled.
	logLevel   LogLevel
	logEnabled bool
}

// requestContext decodes the params and decides the protocol version in
// force for the request.
func (ss *session) requestContext(req request) (*reqContext, error) {
	rc := &reqContext{}
	if len(req.Params) > 0 {
		if err := rc.p.decode(req.Params); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidParams, req.Method, err)
		}
	}
	if err := ss.chooseEra(req, rc); err != nil {
		return nil, err
	}
	rc.shape = shapeOf(rc.version)
	return rc, nil
}

// handleRequest answers the requests that are quick: they never wait on
// the backend, so they run on the reader goroutine, in order.
func (ss *session) handleRequest(rc *reqContext, req request) ([]byte, error) {
	switch req.Method {
	case "initialize":
		return ss.initialize(rc)
	case "ping":
		return ss.emptyResult(rc), nil
	case "logging/setLevel":
		return ss.setLevel(rc)
	case "resources/list":
		return ss.emptyList(rc, "resources"), nil
	case "resources/templates/list":
		return ss.emptyList(rc, "resourceTemplates"), nil
	case "prompts/list":
		return ss.emptyList(rc, "prompts"), nil
	case "resources/read":
		uri := ""
		if rc.p.URI != nil {
			uri = *rc.p.URI
		}
		data, _ := json.Marshal(map[string]string{"uri": uri})
		code := int64(CodeResourceNotFound)
		if rc.modern {
			code = CodeInvalidParams // 2026-07-28 retired -32002
		}
		return nil, &Error{Code: code, Message: "resource not found: this server offers no resources", Data: data}
	case "prompts/get":
		name := ""
		if rc.p.Name != nil {
			name = *rc.p.Name
		}
		return nil, fmt.Errorf("%w: unknown prompt %q: this server offers no prompts", ErrInvalidParams, name)
	case "server/discover":
		return ss.discover(rc)
	}
	return nil, fmt.Errorf("%w: no method %q", ErrMethodNotFound, req.Method)
}

func (ss *session) handleNotification(req request) {
	switch req.Method {
	case "notifications/initialized":
		ss.log.Debug().Msg("client initialized")
	case "notifications/cancelled":
		var p params
		if err := json.Unmarshal(req.Params, &p); err != nil || !ID(p.RequestID).valid() {
			ss.log.Debug().Msg("ignoring malformed notifications/cancelled")
			return
		}
		ss.cancelRequest(ID(p.RequestID))
	default:
		ss.log.Debug().Str("method", req.Method).Msg("ignoring notification")
	}
}

func (ss *session) emptyResult(rc *reqContext) []byte {
	if !rc.modern {
		return []byte(`{}`)
	}
	tail := ss.appendModernTail(nil, rc) // starts with a comma
	return append(append([]byte{'{'}, tail[1:]...), '}')
}

func (ss *session) emptyList(rc *reqContext, field string) []byte {
	buf := []byte(`{"`)
	buf = append(buf, field...)
	buf = append(buf, `":[]`...)
	buf = ss.appendModernList(buf, rc)
	return append(buf, '}')
}

func (ss *session) initialize(rc *reqContext) ([]byte, error) {
	if rc.p.ProtocolVersion == nil {
		return nil, fmt.Errorf(`%w: initialize: "protocolVersion" is required`, ErrInvalidParams)
	}
	requested := *rc.p.ProtocolVersion
	if ss.modernSeen.Load() {
		// The client already speaks the modern protocol here; initialize
		// is not part of it. Name the versions, as the spec asks, since a
		// confused client may show only this message.
		data, _ := json.Marshal(map[string][]string{"supported": supportedVersions()})
		return nil, &Error{Code: CodeMethodNotFound, Data: data,
			Message: "initialize is not part of protocol " + ModernVersion + ", which this client already uses here; send requests with _meta instead"}
	}
	v := requested
	if !isLegacyVersion(v) {
		v = LatestLegacyVersion
	}
	ss.version.Store(&v)
	ss.log.Info().Str("requested", requested).Str("protocol_version", v).
		RawJSON("client", orNull(rc.p.ClientInfo)).Msg("initialize")
	s := shapeOf(v)
	buf := []byte(`{"protocolVersion":`)
	buf = appendString(buf, v)
	buf = append(buf, `,"capabilities":`...)
	buf = ss.appendCapabilities(buf)
	buf = append(buf, `,"serverInfo":`...)
	buf = ss.srv.Info.appendJSON(buf, s)
	if ss.srv.Instructions != "" {
		buf = append(buf, `,"instructions":`...)
		buf = appendString(buf, ss.srv.Instructions)
	}
	return append(buf, '}'), nil
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func (ss *session) appendCapabilities(buf []byte) []byte {
	if ss.srv.ListChanged {
		return append(buf, `{"logging":{},"tools":{"listChanged":true}}`...)
	}
	return append(buf, `{"logging":{},"tools":{}}`...)
}

func (ss *session) setLevel(rc *reqContext) ([]byte, error) {
	if rc.p.Level == nil {
		return nil, fmt.Errorf(`%w: logging/setLevel: "level" is required`, ErrInvalidParams)
	}
	l, err := ParseLogLevel(*rc.p.Level)
	if err != nil {
		return nil, err
	}
	ss.logLevel.Store(int32(l))
	return ss.emptyResult(rc), nil
}

// listTools answers tools/list, a page at a time when PageSize is set.
// It returns the response for request id, in parts.
// Cursors are opaque to clients: base64 of the tool set's generation and
// the offset of the next tool. A cursor from an earlier tool set is
// refused rather than read as an offset into the new one, which would
// skip or repeat tools.
func (ss *session) listTools(rc *reqContext, id ID) (*listParts, error) {
	ts := ss.srv.Tools.Tools()
	enc := ts.encoded(rc.shape)
	start := 0
	if rc.p.Cursor != nil {
		gen, n, err := decodeCursor(*rc.p.Cursor)
		if err != nil || n > len(enc) {
			return nil, fmt.Errorf("%w: tools/list: invalid cursor %q", ErrInvalidParams, *rc.p.Cursor)
		}
		if gen != ts.generation {
			return nil, fmt.Errorf("%w: tools/list: the tool list changed since this cursor was issued; list again from the start", ErrInvalidParams)
		}
		start = n
	}
	end := len(enc)
	ps := ss.srv.PageSize
	if ps == 0 && len(enc) > DefaultPageSize {
		ps = DefaultPageSize
	}
	if ps > 0 && end-start > ps {
		end = start + ps
	}
	head := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	head = append(head, `,"result":{"tools":[`...)
	tail := []byte{']'}
	if end < len(enc) {
		tail = append(tail, `,"nextCursor":`...)
		tail = appendString(tail, encodeCursor(ts.generation, end))
	}
	tail = ss.appendModernList(tail, rc)
	tail = append(tail, "}}"...)
	return &listParts{head: head, items: enc[start:end], tail: tail}, nil
}

// listParts is a list response: head, the items separated by commas,
// tail. The items are the tool set's cached encodings, shared and never
// modified.
type listParts struct {
	head  []byte
	items [][]byte
	tail  []byte
}

func (l *listParts) size() int {
	n := len(l.head) + len(l.tail)
	for _, it := range l.items {
		n += len(it) + 1
	}
	return n
}

func (l *listParts) appendTo(b []byte) []byte {
	b = append(b, l.head...)
	for i, it := range l.items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, l.tail...)
}

// writeTo writes the response and its newline.
func (l *listParts) writeTo(w *bufio.Writer) error {
	w.Write(l.head)
	for i, it := range l.items {
		if i > 0 {
			w.WriteByte(',')
		}
		w.Write(it)
	}
	w.Write(l.tail)
	return w.WriteByte('\n') // a bufio.Writer's error sticks: this reports any
}

func encodeCursor(generation uint64, offset int) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "g%do%d", generation, offset))
}

var errMalformedCursor = errors.New("malformed cursor")

func decodeCursor(c string) (generation uint64, offset int, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 4 || b[0] != 'g' {
		return 0, 0, errMalformedCursor
	}
	g, o, ok := strings.Cut(string(b[1:]), "o")
	if !ok {
		return 0, 0, errMalformedCursor
	}
	generation, err = strconv.ParseUint(g, 10, 64)
	if err != nil {
		return 0, 0, errMalformedCursor
	}
	offset, err = strconv.Atoi(o)
	if err != nil || offset < 0 {
		return 0, 0, errMalformedCursor
	}
	return generation, offset, nil
}

// callTool answers tools/call. Unlike other handlers it returns the whole
// response: a line, or, for a large result when inParts is set, the line
// in parts.
func (ss *session) callTool(ctx context.Context, rc *reqContext, req request, inParts bool) ([]byte, *respParts, error) {
	if rc.p.Name == nil || *rc.p.Name == "" {
		return nil, nil, fmt.Errorf(`%w: tools/call: "name" is required`, ErrInvalidParams)
	}
	args := rc.p.Arguments
	if a := bytes.TrimSpace(args); len(a) > 0 {
		if bytes.Equal(a, []byte("null")) {
			args = nil
		} else if a[0] != '{' {
			return nil, nil, fmt.Errorf(`%w: tools/call: "arguments" must be an object`, ErrInvalidParams)
		}
	}
	if rc.p.Meta != nil && isProgressToken(rc.p.Meta.ProgressToken) {
		stop := ss.heartbeat(rc.p.Meta.ProgressToken)
		defer stop()
	}
	start := time.Now()
	res, err := ss.srv.Tools.CallTool(ctx, &CallToolRequest{Name: *rc.p.Name, Arguments: args, ProtocolVersion: rc.version})
	if err != nil {
		return nil, nil, err
	}
	ss.log.Debug().Str("tool", *rc.p.Name).Dur("dur", time.Since(start)).Bool("is_error", res.IsError).Msg("tool call")
	// The result is written straight into the response line: a large
	// payload is copied once, not once per layer. A large result, when
	// parts are welcome, is not copied at all: the line is written in
	// parts, its texts escaped as they are written.
	size := 128 + len(req.ID) + len(res.StructuredContent)
	for _, c := range res.Content {
		n := len(c.Text) + len(c.TextBytes)
		size += n + n/8 + 32 // escaping headroom
	}
	o := jsonOut{}
	if inParts && size >= bigPart {
		o.parts = &respParts{}
	} else {
		o.buf = make([]byte, 0, size+1) // room for the writer's newline
	}
	o.buf = append(o.buf, `{"jsonrpc":"2.0","id":`...)
	o.buf = append(o.buf, req.ID...)
	o.buf = append(o.buf, `,"result":`...)
	res.encode(&o, rc.shape)
	o.buf = ss.appendModernTail(o.buf[:len(o.buf)-1], rc)
	o.buf = append(o.buf, "}}"...)
	if o.parts != nil {
		o.cut()
		return nil, o.parts, nil
	}
	return o.buf, nil, nil
}

// isProgressToken reports whether a _meta.progressToken can be echoed in
// notifications/progress: a string or an integer, as the schema says, so
// what makes a valid request id. Anything else (null, which some clients
// send for "none", an object, a fraction) is treated as no token, rather
// than echoed into notifications the client would find invalid.
func isProgressToken(raw json.RawMessage) bool { return ID(raw).valid() }

// heartbeat sends notifications/progress every ProgressInterval until
// stop is called. Some hosts reset their request timeout on progress.
func (ss *session) heartbeat(token json.RawMessage) (stop func()) {
	interval := orDefault(ss.srv.ProgressInterval, DefaultProgressInterval)
	if interval < 0 {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	// Owned by the call: stop closes done and waits for the exit, so no
	// progress notification can follow the call's response.
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		start := time.Now()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-t.C:
				p := []byte(`{"progressToken":`)
				p = append(p, token...)
				p = append(p, `,"progress":`...)
				p = appendInt(p, int64(n))
				p = append(p, `,"message":`...)
				p = appendString(p, fmt.Sprintf("waiting for the backend (%ds)", int(time.Since(start).Seconds())))
				p = append(p, '}')
				ss.send(appendNotification(nil, "notifications/progress", p))
			}
		}
	}()
	return func() { close(done); <-exited }
}
