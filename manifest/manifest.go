// Package manifest reads Tairseach tool manifests: one JSON object per
// *.json file, found recursively under manifest folders. It checks each
// file against the manifest format (shipped as manifest.schema.json),
// lints each tool, and compiles each tool's input and output JSON Schemas
// without ever loading a schema from the network or the file system.
//
// Everything here is a pure function of file contents; watching files,
// naming tools for clients and serving them belong to other packages.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Manifest is one manifest file. Only ID, Tools and Implementation are
// needed to serve; the other fields are metadata real manifests carry.
type Manifest struct {
	// File is the path the manifest was read from.
	File string `json:"-"`

	ID              string          `json:"id"`
	Name            string          `json:"name,omitempty"`
	Description     string          `json:"description,omitempty"`
	Version         string          `json:"version,omitempty"`
	ManifestVersion string          `json:"manifest_version,omitempty"`
	Category        string          `json:"category,omitempty"`
	Requires        json.RawMessage `json:"requires,omitempty"`
	Compatibility   json.RawMessage `json:"compatibility,omitempty"`
	Tools           []*Tool         `json:"-"`
	Implementation  Implementation  `json:"implementation"`
}

// Implementation maps tool names to backend methods.
type Implementation struct {
	Type    string            `json:"type,omitempty"`
	Methods map[string]string `json:"methods,omitempty"`
}

// Tool is one entry of a manifest's tools array.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
	// MCPExpose and MCPExposeSnake are the two spellings of the same flag
	// found in real manifests; use Exposed.
	MCPExpose      *bool `json:"mcpExpose,omitempty"`
	MCPExposeSnake *bool `json:"mcp_expose,omitempty"`

	// Index is the tool's position in the manifest's tools array.
	Index int `json:"-"`
	// Method is the backend method from implementation.methods, "" when
	// the manifest maps none.
	Method string `json:"-"`
	// compiled holds the compiled schemas once Schemas has run. Parse
	// compiles every schema to check it but keeps none: most tools of a
	// large set are never called, and compiled schemas are big.
	compiled struct {
		once    sync.Once
		in, out *jsonschema.Schema
		err     error
		quick   *argCheck // the input schema's fast path; nil when there is none
	}
	file string // the manifest file, for schema locations in errors
	// Trivial is true when InputSchema accepts any object, so arguments
	// need no validation beyond being an object.
	Trivial bool `json:"-"`
	// Broken is true when the tool has an error-level problem: it is not served.
	Broken bool `json:"-"`
}

// Annotations are a tool's behaviour hints.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Schemas returns the tool's compiled input schema and output schema (nil
// when the tool declares none), compiling them on first use. It is safe
// for concurrent use. For a tool Parse found servable it does not fail.
func (t *Tool) Schemas() (in, out *jsonschema.Schema, err error) {
	c := &t.compiled
	c.once.Do(func() {
		c.in, c.out, c.err = compileTool(t.file, t)
		if c.err == nil {
			if v, err := decodeValue(t.InputSchema); err == nil {
				c.quick = newArgCheck(v)
			}
		}
	})
	return c.in, c.out, c.err
}

// ArgumentsSurelyValid reports whether args (the raw JSON object of a
// call) certainly satisfy the input schema, checked without decoding
// them. false means "not sure": validate with the schema from Schemas,
// which also says what is wrong.
func (t *Tool) ArgumentsSurelyValid(args []byte) bool {
	if _, _, err := t.Schemas(); err != nil {
		return false
	}
	args = bytes.Trim(args, " \t\r\n") // JSON's white space
	if len(args) == 0 || args[0] != '{' {
		return false // arguments are an object; the library words anything else
	}
	return t.compiled.quick.valid(args)
}

// Exposed reports whether the tool is meant for MCP clients: neither
// spelling of the expose flag is false.
func (t *Tool) Exposed() bool {
	return (t.MCPExpose == nil || *t.MCPExpose) && (t.MCPExposeSnake == nil || *t.MCPExposeSnake)
}

// Path returns the JSON path of the tool in its manifest, e.g. tools[2].
func (t *Tool) Path() string { return fmt.Sprintf("tools[%d]", t.Index) }

// Servable reports whether the tool can be served: exposed, mapped to a
// method, and free of errors.
func (t *Tool) Servable() bool { return t.Exposed() && t.Method != "" && !t.Broken }
