package protocoltest

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Checker validates the server's side of one recorded session. Feed it
// every client line (to learn which method each id belongs to) and every
// server line, in order; each server line is checked against the schema
// of the protocol version in force. It is safe for concurrent use.
type Checker struct {
	mu      sync.Mutex
	version string
	methods map[string]string // request id (as sent) → method
}

// NewChecker returns a checker for a session that starts in version
// (use the version the client will ask for; Initialized switches it).
func NewChecker(version string) *Checker {
	return &Checker{version: version, methods: map[string]string{}}
}

// SetVersion switches the version in force, e.g. after initialize.
func (c *Checker) SetVersion(v string) {
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
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
		}
		if json.Unmarshal(m, &env) == nil && len(env.ID) > 0 && env.Method != "" {
			c.methods[string(env.ID)] = env.Method
		}
	}
}

// ServerLine checks one line the server wrote.
func (c *Checker) ServerLine(line []byte) error {
	v, err := decode(line)
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	vs, err := schemasFor(version)
	if err != nil {
		return err
	}
	if arr, ok := v.([]any); ok {
		if !vs.has("JSONRPCBatchResponse") {
			return fmt.Errorf("a batch response, but %s has no batches", version)
		}
		if err := vs.validate("JSONRPCBatchResponse", v); err != nil {
			return err
		}
		for _, el := range arr {
			b, _ := json.Marshal(el)
			if err := c.checkMessage(vs, b); err != nil {
				return err
			}
		}
		return nil
	}
	return c.checkMessage(vs, line)
}

func (c *Checker) checkMessage(vs *versionSchemas, line []byte) error {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	v, err := decode(line)
	if err != nil {
		return err
	}
	switch {
	case env.Method != "":
		if len(env.ID) > 0 {
			return fmt.Errorf("the server sent a request (%s); it never should", env.Method)
		}
		def, ok := notificationDefs[env.Method]
		if !ok {
			return fmt.Errorf("unexpected notification %s", env.Method)
		}
		if err := vs.validate("JSONRPCNotification", v); err != nil {
			return err
		}
		return vs.validate(def, v)
	case env.Error != nil:
		def := "JSONRPCErrorResponse"
		if !vs.has(def) {
			def = "JSONRPCError"
		}
		if string(env.ID) == "null" {
			// JSON-RPC requires id null when the request's id could not
			// be read; the older schemas cannot express that, so check
			// the rest of the message with a stand-in id.
			m := v.(map[string]any)
			m["id"] = json.Number("0")
		}
		return vs.validate(def, v)
	case env.Result != nil:
		def := "JSONRPCResultResponse"
		if !vs.has(def) {
			def = "JSONRPCResponse"
		}
		if err := vs.validate(def, v); err != nil {
			return err
		}
		c.mu.Lock()
		method, ok := c.methods[string(env.ID)]
		c.mu.Unlock()
		if !ok {
			return fmt.Errorf("a response to id %s, which the client never sent", env.ID)
		}
		rdef, ok := resultDefs[method]
		if !ok {
			return fmt.Errorf("a result for %s, a method the bridge does not answer", method)
		}
		if !vs.has(rdef) {
			return fmt.Errorf("a result for %s, which protocol %s does not have", method, vs.version)
		}
		result, _ := decode(env.Result)
		return vs.validate(rdef, result)
	}
	return fmt.Errorf("neither a request, a notification nor a response")
}
