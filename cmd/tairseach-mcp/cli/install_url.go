package cli

import (
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// clientEntry is the bridge's entry in a client's file: a command the
// client starts (serverEntry), or the URL of a bridge serving HTTP that
// it reaches (urlEntry).
type clientEntry interface {
	// in returns the entry as c's file spells it, or why c cannot have
	// it.
	in(c mcpClient) (clientEntry, error)
	// same reports whether v, an entry in the file, does what this one
	// does: then install has nothing to change.
	same(v jsontext.Value) bool
	// secret reports whether the entry holds a credential.
	secret() bool
}

func (s serverEntry) in(c mcpClient) (clientEntry, error) {
	if c.typed {
		s.Type = "stdio"
	}
	return s, nil
}

func (s serverEntry) secret() bool { return false }

// urlEntry is the bridge's entry for a client that reaches a running
// bridge (tairseach-mcp --transport http) at url, with the bearer token
// when it has one. Each client spells it its own way: Claude Code and VS
// Code {"type": "http", "url"}, Cursor {"url"}, Windsurf {"serverUrl"}
// (docs/clients.md names the sources).
type urlEntry struct {
	Type      string            `json:"type,omitzero"`
	URL       string            `json:"url,omitzero"`
	ServerURL string            `json:"serverUrl,omitzero"`
	Headers   map[string]string `json:"headers,omitzero"`

	url, token string // as given, before in spells them
}

func (u urlEntry) in(c mcpClient) (clientEntry, error) {
	out := urlEntry{url: u.url, token: u.token}
	switch c.urlKey {
	case "":
		return nil, fmt.Errorf("%s starts its servers as commands (stdio) only: install it without --url, and it starts a bridge of its own", c.title)
	case "serverUrl":
		out.ServerURL = u.url
	default:
		out.URL = u.url
	}
	if c.typed {
		out.Type = "http"
	}
	if u.token != "" {
		out.Headers = map[string]string{"Authorization": "Bearer " + u.token}
	}
	return out, nil
}

func (u urlEntry) same(v jsontext.Value) bool {
	var old urlEntry
	return json.Unmarshal(v, &old) == nil && old.URL == u.URL && old.ServerURL == u.ServerURL && maps.Equal(old.Headers, u.Headers)
}

func (u urlEntry) secret() bool { return u.token != "" }

// where returns the URL an entry reaches, in whichever member its client
// uses, or "".
func (u urlEntry) where() string { return u.URL + u.ServerURL }

// checkURL checks install's --url: the http or https URL of a bridge's
// MCP endpoint.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("--url %q: want the http:// or https:// URL the HTTP bridge serves, such as http://127.0.0.1:8411/mcp", raw)
	case u.User != nil:
		return fmt.Errorf("--url %q: no credentials in the URL: set TAIRSEACH_AUTH_TOKEN or --auth-token-file, and the entry carries the token as a header", raw)
	}
	return nil
}

// redact hides the credentials of an entry shown on the terminal: an
// Authorization header keeps its scheme only.
func redact(v jsontext.Value) jsontext.Value {
	var e struct {
		Headers map[string]jsontext.Value `json:"headers"`
	}
	if json.Unmarshal(v, &e) != nil || e.Headers == nil {
		return v
	}
	var m jsonObject
	if json.Unmarshal(v, &m) != nil {
		return v
	}
	for name, hv := range e.Headers {
		if !strings.EqualFold(name, "Authorization") {
			continue
		}
		var s string
		_ = json.Unmarshal(hv, &s)
		scheme, _, _ := strings.Cut(s, " ")
		e.Headers[name], _ = json.Marshal(scheme + " …") // a string: it encodes
	}
	headers, err := json.Marshal(e.Headers, json.Deterministic(true))
	if err != nil {
		return v
	}
	m.set("headers", headers)
	out, err := json.Marshal(m)
	if err != nil {
		return v
	}
	return out
}
