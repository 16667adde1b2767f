package mcphttp

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// checkHeaders checks a modern request before its session sees it: its
// headers against its body (MCP-Protocol-Version against _meta's version,
// Mcp-Method against the method, Mcp-Name against params.name,
// params.uri, or the tasks extension's params.taskId), and that _meta
// holds what every such request must carry.
// A header that is missing or disagrees is -32020 (HeaderMismatch); a
// version the server does not speak, -32022; a malformed _meta, -32602.
// Each is answered 400 Bad Request.
func checkHeaders(r *http.Request, env protocol.Envelope) *protocol.Error {
	version := r.Header.Get("MCP-Protocol-Version")
	switch {
	case env.Batch:
		return &protocol.Error{Code: protocol.CodeInvalidRequest, Message: "JSON-RPC batches are not part of protocol " + protocol.ModernVersion}
	case version == "":
		return headerMismatch("the MCP-Protocol-Version header is required")
	case !protocol.IsModernVersion(version) && !protocol.IsLegacyVersion(version):
		return protocol.UnsupportedVersion(version)
	case env.Method == "":
		return &protocol.Error{Code: protocol.CodeInvalidRequest, Message: "clients send no responses in protocol " + version}
	case env.ProtocolVersion == "":
		// Missing from the body, not mismatched: the request is malformed.
		return &protocol.Error{Code: protocol.CodeInvalidParams,
			Message: env.Method + `: _meta["io.modelcontextprotocol/protocolVersion"] is required in protocol ` + version}
	case version != env.ProtocolVersion:
		return headerMismatch("MCP-Protocol-Version header value %q does not match body value %q", safetext.Cut(version, maxShown), env.ProtocolVersion)
	case env.MetaErr != nil:
		return protocol.WireError(env.MetaErr)
	}
	if got := r.Header.Get("Mcp-Method"); got != env.Method {
		if got == "" {
			return headerMismatch("the Mcp-Method header is required")
		}
		return headerMismatch("Mcp-Method header value %q does not match body value %q", safetext.Cut(got, maxShown), safetext.Cut(env.Method, maxShown))
	}
	switch env.Method {
	case "tools/call", "resources/read", "prompts/get", "tasks/get", "tasks/update", "tasks/cancel":
	default:
		return nil
	}
	raw, ok := r.Header["Mcp-Name"]
	if !ok || len(raw) != 1 {
		return headerMismatch("one Mcp-Name header is required for %s", env.Method)
	}
	name, err := decodeHeaderValue(raw[0])
	if err != nil {
		return headerMismatch("Mcp-Name header value: %v", err)
	}
	if name != env.Name {
		return headerMismatch("Mcp-Name header value %q does not match body value %q", safetext.Cut(name, maxShown), safetext.Cut(env.Name, maxShown))
	}
	return nil
}

// headerMismatch returns the -32020 error of a header that is missing or
// disagrees with the body.
func headerMismatch(format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeHeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, args...)}
}

// Base64 sentinel of a header value that is not plain ASCII.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// decodeHeaderValue decodes the value of a header that mirrors the body
// (Mcp-Name, Mcp-Param-{Name}). A value of such a header holds only
// visible ASCII, spaces and tabs, not at its ends; any other value, and
// one that starts with =?base64? and ends with ?=, is sent in that form,
// its UTF-8 in base64 between the two. A value that starts so but ends
// otherwise is plain.
func decodeHeaderValue(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return "", fmt.Errorf("byte %#02x is not visible ASCII, a space or a tab: send such a value as %s…%s", c, base64Prefix, base64Suffix)
		}
	}
	enc, ok := strings.CutPrefix(v, base64Prefix)
	if ok {
		enc, ok = strings.CutSuffix(enc, base64Suffix)
	}
	if !ok {
		if strings.Trim(v, " \t") != v {
			return "", fmt.Errorf("%q starts or ends with white space: send such a value as %s…%s", safetext.Cut(v, maxShown), base64Prefix, base64Suffix)
		}
		return v, nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return "", fmt.Errorf("bad base64 in %q", safetext.Cut(v, maxShown))
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%q is not UTF-8 in base64", safetext.Cut(v, maxShown))
	}
	return string(b), nil
}

// maxShown is the most bytes of a value a message quotes (safetext.Cut):
// no message repeats a long value whole.
const maxShown = 64

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
