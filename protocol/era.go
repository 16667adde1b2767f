package protocol

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Protocol versions the bridge speaks.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestLegacyVersion is answered to an initialize asking for a version
	// the bridge does not know (or for a modern one, which initialize cannot carry).
	LatestLegacyVersion = Version20251125
	// ModernVersion is the first stateless protocol version.
	ModernVersion = Version20260728
)

// LegacyVersions lists the initialize-handshake versions, oldest first.
var LegacyVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// ModernVersions lists the stateless versions, oldest first.
var ModernVersions = []string{Version20260728}

// IsLegacyVersion reports whether v is one of LegacyVersions.
func IsLegacyVersion(v string) bool { return slices.Contains(LegacyVersions, v) }

// IsModernVersion reports whether v is one of ModernVersions.
func IsModernVersion(v string) bool { return slices.Contains(ModernVersions, v) }

// supportedVersions lists every version the server speaks, newest first,
// as server/discover and -32022 errors report them.
func supportedVersions() []string {
	vs := slices.Concat(LegacyVersions, ModernVersions)
	slices.Reverse(vs)
	return vs
}

// shape says which optional fields a version's schema has. Each version
// adds fields to the one before, so shapes are ordered.
type shape uint8

const (
	shapeBasic       shape = iota // 2024-11-05
	shapeAnnotations              // 2025-03-26: tool annotations
	shapeStructured               // 2025-06-18 on: titles, outputSchema, structuredContent
	shapeTasks                    // 2025-11-25 alone: a tool's execution (2026-07-28's Tool has none)
	numShapes
)

// shapeOf returns the shape of a version (ISO dates: strings order them).
func shapeOf(version string) shape {
	switch {
	case version == Version20251125:
		return shapeTasks
	case version >= Version20250618:
		return shapeStructured
	case version >= Version20250326:
		return shapeAnnotations
	}
	return shapeBasic
}

// era is the protocol version in force for one request.
type era struct {
	version  string
	modern   bool
	logLevel LogLevel // the modern request's _meta logLevel for Call.Log; logOff if none
}

func (e era) shape() shape { return shapeOf(e.version) }

// requestMeta is the _meta object of a request.
type requestMeta struct {
	ProgressToken      jsontext.Value `json:"progressToken"`
	ProtocolVersion    string         `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities jsontext.Value `json:"io.modelcontextprotocol/clientCapabilities"`
	LogLevel           *string        `json:"io.modelcontextprotocol/logLevel"`
	ClientInfo         jsontext.Value `json:"io.modelcontextprotocol/clientInfo"` // read by clientOf
}

// chooseEra decides the protocol version in force for a request of a
// method with flags: a request whose _meta names a modern version is
// served statelessly in it (after checking the rest of _meta); any other
// is served in the legacy version negotiated by initialize (or the newest
// legacy version before it, so piping requests by hand works). Legacy-only
// methods heed only a modern version in _meta: initialize carries its
// version in its params.
func (ss *Session) chooseEra(flags methodFlags, method string, m *requestMeta) (era, error) {
	legacy := era{version: ss.legacyVersion(), logLevel: logOff}
	v := m.ProtocolVersion
	if v == "" || IsLegacyVersion(v) || flags&legacyOnly != 0 && !IsModernVersion(v) {
		if flags&modernOnly != 0 {
			return legacy, fmt.Errorf(`%w: %s: _meta["io.modelcontextprotocol/protocolVersion"] is required (protocol %s)`, ErrInvalidParams, method, ModernVersion)
		}
		return legacy, nil
	}
	if !IsModernVersion(v) {
		return legacy, UnsupportedVersion(v)
	}
	level, err := m.checkModern(method)
	if err != nil {
		return legacy, err
	}
	if flags&legacyOnly != 0 {
		return legacy, fmt.Errorf("%w: %s is not part of protocol %s", ErrMethodNotFound, method, v)
	}
	ss.modernSeen.Store(true)
	return era{version: v, modern: true, logLevel: level}, nil
}

// checkModern checks the rest of the _meta of a request in a modern
// version: the client's capabilities, an object, are required, and a log
// level must be one. It returns that level, or logOff. A request that
// fails is malformed: -32602, which HTTP answers 400 Bad Request.
func (m *requestMeta) checkModern(method string) (LogLevel, error) {
	if m.ClientCapabilities.Kind() != '{' {
		return logOff, fmt.Errorf(`%w: %s: _meta["io.modelcontextprotocol/clientCapabilities"] is required and must be an object`, ErrInvalidParams, method)
	}
	if m.LogLevel == nil {
		return logOff, nil
	}
	return ParseLogLevel(*m.LogLevel)
}

// UnsupportedVersion is the error that answers a request in protocol
// version v, which the server does not speak: it lists those it does.
func UnsupportedVersion(v string) *Error {
	data, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{supportedVersions(), v}, encodeOpts)
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version " + v, Data: data}
}

// legacyVersion is the version negotiated by initialize, or the newest
// legacy version before initialize.
func (ss *Session) legacyVersion() string {
	if v := ss.version.Load(); v != nil {
		return *v
	}
	return LatestLegacyVersion
}

// listTTL is the ttlMs of modern list results: how long a client may
// cache them (changes are announced on subscriptions/listen streams). A
// resource read's is 0: the bridge cannot know how long a backend's data
// stays true.
const listTTL = 60000

// resultTail holds what a modern (2026-07-28) result carries beside its
// own fields; dispatch fills it, and it stays empty in the legacy era.
type resultTail struct {
	TTLMs      *int        `json:"ttlMs,omitzero"` // 0 is sent: stale at once
	CacheScope string      `json:"cacheScope,omitzero"`
	ResultType string      `json:"resultType,omitzero"`
	Meta       *resultMeta `json:"_meta,omitzero"`
}

func (t *resultTail) tail() *resultTail { return t }

// resultMeta is the _meta of a modern result.
type resultMeta struct {
	SubscriptionID jsontext.Value  `json:"io.modelcontextprotocol/subscriptionId,omitzero"`
	ServerInfo     *Implementation `json:"io.modelcontextprotocol/serverInfo,omitzero"`
}

// finishModern fills the tail of a result to a modern request.
func (ss *Session) finishModern(t *resultTail, rq *request, flags methodFlags) {
	if !rq.modern {
		return
	}
	if flags&cacheable != 0 {
		ttl := listTTL
		if flags&stale != 0 {
			ttl = 0
		}
		t.TTLMs, t.CacheScope = &ttl, "private"
	}
	if t.ResultType == "" {
		t.ResultType = "complete"
	}
	if t.Meta == nil {
		t.Meta = &resultMeta{}
	}
	info := ss.srv.Info.shaped(rq.shape())
	t.Meta.ServerInfo = &info
}

// discoverResult is the result of server/discover.
type discoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      serverCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitzero"`
	resultTail
}

func (ss *Session) discover(_ context.Context, rq *request, _ *noParams) (*discoverResult, error) {
	return &discoverResult{
		SupportedVersions: supportedVersions(),
		Capabilities:      ss.capabilities(rq.shape(), true),
		Instructions:      ss.srv.Instructions,
	}, nil
}
