package clientconfig

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Entry is the bridge's entry in a client's file: a command the client
// starts (CommandEntry), or the URL of a bridge serving HTTP that it
// reaches (URLEntry).
type Entry interface {
	// in returns the entry as c's file spells it, or why c cannot have
	// it.
	in(c Client) (Entry, error)
	// same reports whether v, an entry in the file, does what this one
	// does: then install has nothing to change.
	same(v jsontext.Value) bool
	// secret reports whether the entry holds a credential.
	secret() bool
}

// CommandEntry is an entry whose client starts Command with Args and
// speaks MCP with it over stdio.
type CommandEntry struct {
	Type    string   `json:"type,omitzero"` // set by Install for the clients that want it
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func (s CommandEntry) in(c Client) (Entry, error) {
	if c.typed {
		s.Type = "stdio"
	}
	return s, nil
}

func (s CommandEntry) same(v jsontext.Value) bool {
	var old CommandEntry
	return json.Unmarshal(v, &old) == nil && old.Command == s.Command && slices.Equal(old.Args, s.Args)
}

func (CommandEntry) secret() bool { return false }

// URLEntry is the entry of a client that reaches a running bridge
// (tairseach-mcp --transport http) at a URL, with the bearer token when it
// has one. Each client spells it its own way: Claude Code and VS Code
// {"type": "http", "url"}, Cursor {"url"}, Windsurf {"serverUrl"}
// (docs/clients.md names the sources).
type URLEntry struct {
	Type      string            `json:"type,omitzero"`
	URL       string            `json:"url,omitzero"`
	ServerURL string            `json:"serverUrl,omitzero"`
	Headers   map[string]string `json:"headers,omitzero"`

	url, token string // as given, before in spells them
}

// NewURLEntry returns the entry that reaches the bridge at url, with
// token ("" for none) as its bearer token.
func NewURLEntry(url, token string) URLEntry { return URLEntry{url: url, token: token} }

func (u URLEntry) in(c Client) (Entry, error) {
	out := URLEntry{url: u.url, token: u.token}
	switch c.urlKey {
	case "":
		return nil, fmt.Errorf("%s starts its servers as commands (stdio) only: install it without --url, and it starts a bridge of its own", c.Title)
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

func (u URLEntry) same(v jsontext.Value) bool {
	var old URLEntry
	return json.Unmarshal(v, &old) == nil && old.URL == u.URL && old.ServerURL == u.ServerURL && maps.Equal(old.Headers, u.Headers)
}

func (u URLEntry) secret() bool { return u.token != "" }

// Where returns the URL an entry read from a file reaches, in whichever
// member its client uses, or "".
func (u URLEntry) Where() string { return u.URL + u.ServerURL }

// ParseEntry reads an entry of a client's file: a URLEntry when it names
// a URL, else a CommandEntry when it names a command; ok is false when it
// is neither.
func ParseEntry(v jsontext.Value) (e Entry, ok bool) {
	var u URLEntry
	if json.Unmarshal(v, &u) == nil && u.Where() != "" {
		return u, true
	}
	var s CommandEntry
	if json.Unmarshal(v, &s) != nil || s.Command == "" {
		return nil, false
	}
	return s, true
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
