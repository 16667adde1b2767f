package mcphttp

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// checkHeaders checks a modern request before its session sees it: its
// headers against its body (MCP-Protocol-Version against _meta's version,
// Mcp-Method against the method, Mcp-Name against params.name or
// params.uri), and that _meta holds what every such request must carry.
// A header that is missing or disagrees is -32020 (HeaderMismatch); a
// version the server does not speak, -32022; a malformed _meta, -32602.
// Each is answered 400 Bad Request.
func checkHeaders(r *http.Request, env protocol.Envelope) *protocol.Error {
	mismatch := func(format string, args ...any) *protocol.Error {
		return &protocol.Error{Code: protocol.CodeHeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, args...)}
	}
	version := r.Header.Get("MCP-Protocol-Version")
	switch {
	case env.Batch:
		return &protocol.Error{Code: protocol.CodeInvalidRequest, Message: "JSON-RPC batches are not part of protocol " + protocol.ModernVersion}
	case version == "":
		return mismatch("the MCP-Protocol-Version header is required")
	case !protocol.IsModernVersion(version) && !protocol.IsLegacyVersion(version):
		return protocol.UnsupportedVersion(version)
	case env.Method == "":
		return &protocol.Error{Code: protocol.CodeInvalidRequest, Message: "clients send no responses in protocol " + version}
	case env.ProtocolVersion == "":
		// Missing from the body, not mismatched: the request is malformed.
		return &protocol.Error{Code: protocol.CodeInvalidParams,
			Message: env.Method + `: _meta["io.modelcontextprotocol/protocolVersion"] is required in protocol ` + version}
	case version != env.ProtocolVersion:
		return mismatch("MCP-Protocol-Version header value %q does not match body value %q", version, env.ProtocolVersion)
	case env.MetaErr != nil:
		return protocol.WireError(env.MetaErr)
	}
	if got := r.Header.Get("Mcp-Method"); got != env.Method {
		if got == "" {
			return mismatch("the Mcp-Method header is required")
		}
		return mismatch("Mcp-Method header value %q does not match body value %q", got, env.Method)
	}
	switch env.Method {
	case "tools/call", "resources/read", "prompts/get":
	default:
		return nil
	}
	raw, ok := r.Header["Mcp-Name"]
	if !ok || len(raw) != 1 {
		return mismatch("one Mcp-Name header is required for %s", env.Method)
	}
	name, err := decodeHeaderValue(raw[0])
	if err != nil {
		return mismatch("Mcp-Name header value: %v", err)
	}
	if name != env.Name {
		return mismatch("Mcp-Name header value %q does not match body value %q", name, env.Name)
	}
	return nil
}

// decodeHeaderValue decodes a header value that may use the base64
// sentinel form, =?base64?…?=, for values that are not plain ASCII.
func decodeHeaderValue(v string) (string, error) {
	if rest, ok := strings.CutPrefix(v, "=?base64?"); ok {
		enc, ok := strings.CutSuffix(rest, "?=")
		if !ok {
			return "", fmt.Errorf("%q starts as base64 but does not end with ?=", v)
		}
		b, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return "", fmt.Errorf("bad base64 in %q", v)
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return "", fmt.Errorf("invalid character %q", c)
		}
	}
	return v, nil
}

// refuse answers a request the handler refuses before any session sees
// it: status, and a JSON-RPC error without an id.
func refuse(w http.ResponseWriter, status int, code int64, message string) {
	writeError(w, status, nil, &protocol.Error{Code: code, Message: message})
}

// writeError answers status with the JSON-RPC error e, for the request
// with id when known. Without one the error has no id, as the transport
// says of its refusals: no request of the client's is answered.
func writeError(w http.ResponseWriter, status int, id jsontext.Value, e *protocol.Error) {
	var body []byte
	if id != nil {
		body = protocol.ErrorResponse(id, e)
	} else {
		body, _ = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			Error   *protocol.Error `json:"error"`
		}{"2.0", e}) // a string and an error made here: they encode
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// statusOf returns the HTTP status of a response sent as JSON: in the
// modern era, a method the server does not have is 404 and a version it
// does not speak is 400, as the transport says; anything else is 200.
func statusOf(m *protocol.Message, modern bool) int {
	if !modern || m.Size() > 4<<10 { // an error response is short
		return http.StatusOK
	}
	b := m.Bytes()
	if !bytes.Contains(b, []byte(`"error":`)) {
		return http.StatusOK
	}
	var resp struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &resp) != nil || resp.Error == nil {
		return http.StatusOK
	}
	switch resp.Error.Code {
	case protocol.CodeMethodNotFound:
		return http.StatusNotFound
	case protocol.CodeUnsupportedProtocolVersion, protocol.CodeHeaderMismatch:
		return http.StatusBadRequest
	}
	return http.StatusOK
}
