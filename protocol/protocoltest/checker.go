package protocoltest

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Checker validates the server's side of one recorded session. Feed it
// every client line (to learn which method and protocol version each id
// belongs to) and every server line, in order; each server line is
// checked against the schema of the protocol version in force for it: a
// response, that of its request (a modern request names its version in
// _meta; any other is in the session's version, which an initialize
// result sets). It is safe for concurrent use.
type Checker struct {
	mu       sync.Mutex
	version  string             // the session's (legacy) version
	requests map[string]request // by id as sent
	tokens   map[string]string  // progress token (as sent) → version of its request
}

type request struct{ method, version string }

// NewChecker returns a checker for a session whose version is version
// until an initialize result changes it.
func NewChecker(version string) *Checker {
	return &Checker{version: version, requests: map[string]request{}, tokens: map[string]string{}}
}

// ClientLine records a line the client sent.
func (c *Checker) ClientLine(line []byte) {
	var msgs []json.RawMessage
	if len(line) > 0 && line[0] == '[' {
		_ = json.Unmarshal(line, &msgs)
	} else {
		msgs = []json.RawMessage{line}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					ProgressToken   json.RawMessage `json:"progressToken"`
					ProtocolVersion string          `json:"io.modelcontextprotocol/protocolVersion"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(m, &env) != nil || len(env.ID) == 0 || env.Method == "" {
			continue
		}
		version := c.version
		if v := env.Params.Meta.ProtocolVersion; v >= modernFrom {
			if _, err := schemasFor(v); err == nil {
				version = v
			}
		}
		c.requests[string(env.ID)] = request{env.Method, version}
		if len(env.Params.Meta.ProgressToken) > 0 {
			c.tokens[string(env.Params.Meta.ProgressToken)] = version
		}
	}
}

// modernFrom is the first stateless version: one named in a request's
// _meta is the version of that request alone.
const modernFrom = "2026-07-28"

// versionOf returns the version in force for a message to the request
// with id, or the session's.
func (c *Checker) versionOf(id json.RawMessage) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.requests[string(id)]; ok {
		return r.version
	}
	return c.version
}

// ServerLine checks one line the server wrote: that it is JSON and, when
// the schemas are here, valid for its version (see the package comment).
func (c *Checker) ServerLine(line []byte) error {
	v, err := decode(line)
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if Dir() == "" {
		if Required() {
			return errMissing
		}
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		return c.checkMessage(line)
	}
	vs, err := schemasFor(c.versionOf(nil))
	if err != nil {
		return err
	}
	if !vs.has("JSONRPCBatchResponse") {
		return fmt.Errorf("a batch response, but %s has no batches", vs.version)
	}
	for _, el := range arr {
		nullIDStandIn(el)
	}
	if err := vs.validate("JSONRPCBatchResponse", v); err != nil {
		return err
	}
	for _, el := range arr {
		b, _ := json.Marshal(el)
		if err := c.checkMessage(b); err != nil {
			return err
		}
	}
	return nil
}

func (c *Checker) checkMessage(line []byte) error {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
		Params struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Meta          struct {
				SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	v, err := decode(line)
	if err != nil {
		return err
	}
	c.mu.Lock()
	r, ok := c.requests[string(env.ID)]
	version := c.version
	if ok {
		version = r.version
	}
	if ok && r.method == "initialize" && env.Result != nil {
		// Shaped for the version it negotiates.
		var init struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(env.Result, &init) == nil {
			c.version = init.ProtocolVersion
			version = init.ProtocolVersion
		}
	}
	c.mu.Unlock()
	switch {
	case len(env.Params.Meta.SubscriptionID) > 0:
		version = c.versionOf(env.Params.Meta.SubscriptionID)
	case len(env.Params.ProgressToken) > 0:
		c.mu.Lock()
		if tv, ok := c.tokens[string(env.Params.ProgressToken)]; ok {
			version = tv
		}
		c.mu.Unlock()
	}
	vs, err := schemasFor(version)
	if err != nil {
		return err
	}
	switch {
	case env.Method != "" && len(env.ID) > 0:
		// A request of the server's: only to ask the user, and only where
		// the version lets a server send requests of its own.
		def, ok := requestDefs[env.Method]
		if !ok || !vs.has(def) || version >= modernFrom {
			return fmt.Errorf("the server sent a request (%s), which protocol %s does not let it send", env.Method, vs.version)
		}
		if err := vs.validate("JSONRPCRequest", v); err != nil {
			return err
		}
		return vs.validate(def, v)
	case env.Method != "":
		def, ok := notificationDefs[env.Method]
		if !ok {
			return fmt.Errorf("unexpected notification %s", env.Method)
		}
		if err := vs.validate("JSONRPCNotification", v); err != nil {
			return err
		}
		if env.Method == "notifications/tasks" {
			if version < modernFrom {
				return fmt.Errorf("notifications/tasks in protocol %s, which has notifications/tasks/status", version)
			}
			if vs, err = schemasFor(extTasks); err != nil {
				return err
			}
		}
		return vs.validate(def, v)
	case env.Error != nil:
		def := "JSONRPCErrorResponse"
		if !vs.has(def) {
			def = "JSONRPCError"
		}
		nullIDStandIn(v)
		return vs.validate(def, v)
	case env.Result != nil:
		def := "JSONRPCResultResponse"
		if !vs.has(def) {
			def = "JSONRPCResponse"
		}
		if err := vs.validate(def, v); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("a response to id %s, which the client never sent", env.ID)
		}
		rdef, ok := resultDefs[r.method]
		if !ok && (version < modernFrom || extResultDefs[r.method] == "") {
			return fmt.Errorf("a result for %s, a method the bridge does not answer", r.method)
		}
		if ok && !vs.has(rdef) && extResultDefs[r.method] == "" {
			return fmt.Errorf("a result for %s, which protocol %s does not have", r.method, vs.version)
		}
		result, _ := decode(env.Result)
		m, _ := result.(map[string]any)
		switch {
		case m != nil && m["resultType"] == "input_required" && vs.has("InputRequiredResult"):
			rdef = "InputRequiredResult" // the tool asks the user first
		case version >= modernFrom && (m["resultType"] == "task" || extResultDefs[r.method] != ""):
			// The tasks extension's: a task created, or a tasks/* result.
			if m["resultType"] == "task" {
				rdef = "CreateTaskResult"
			} else {
				rdef = extResultDefs[r.method]
			}
			if vs, err = schemasFor(extTasks); err != nil {
				return err
			}
		case r.method == "tools/call" && m != nil && m["task"] != nil:
			rdef = "CreateTaskResult" // 2025-11-25: the call runs as a task
		}
		return vs.validate(rdef, result)
	}
	return fmt.Errorf("neither a request, a notification nor a response")
}

// nullIDStandIn replaces the null id of an error response by 0. JSON-RPC
// requires id null when the request's id could not be read; the older
// schemas cannot express that, so the rest of the message is checked with
// a stand-in id.
func nullIDStandIn(msg any) {
	if m, ok := msg.(map[string]any); ok && m["error"] != nil {
		if id, ok := m["id"]; ok && id == nil {
			m["id"] = json.Number("0")
		}
	}
}
