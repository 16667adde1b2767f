// Package manifest reads Tairseach tool manifests: one JSON object per
// *.json file, found recursively under manifest folders. It checks each
// file against the manifest format (shipped as manifest.schema.json),
// lints each tool, resource, resource template and prompt, and checks
// that every JSON Schema in them compiles, without ever loading a schema
// from the network or the file system.
//
// Everything here is a pure function of file contents; watching files,
// naming tools for clients, keeping compiled schemas and serving tools
// belong to other packages.
package manifest

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Manifest is one manifest file. Only ID, Tools and Implementation are
// needed to serve; the other fields are metadata real manifests carry.
type Manifest struct {
	// File is the path the manifest was read from.
	File string `json:"-"`

	ID              string         `json:"id"`
	Name            string         `json:"name"`
	Description     string         `json:"description"`
	Version         string         `json:"version"`
	ManifestVersion string         `json:"manifest_version"`
	Category        string         `json:"category"`
	Requires        jsontext.Value `json:"requires"`
	Compatibility   jsontext.Value `json:"compatibility"`
	// Tools, Resources, ResourceTemplates and Prompts are decoded one by
	// one, so that a problem in one keeps only that one from being served.
	Tools             []*Tool             `json:"-"`
	Resources         []*Resource         `json:"-"`
	ResourceTemplates []*ResourceTemplate `json:"-"`
	Prompts           []*Prompt           `json:"-"`
	Implementation    Implementation      `json:"implementation"`
}

// Implementation maps tool names to backend methods.
type Implementation struct {
	Type    string            `json:"type"`
	Methods map[string]string `json:"methods"`
}

// Tool is one entry of a manifest's tools array.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// InputSchema and OutputSchema (nil when the tool declares none) are
	// compact, the form clients are sent.
	InputSchema  jsontext.Value `json:"inputSchema"`
	OutputSchema jsontext.Value `json:"outputSchema"`
	Annotations  *Annotations   `json:"annotations"`
	// MCPExpose and MCPExposeSnake are the two spellings of the same flag
	// found in real manifests; use Exposed.
	MCPExpose      *bool `json:"mcpExpose"`
	MCPExposeSnake *bool `json:"mcp_expose"`

	// Index is the tool's position in the manifest's tools array.
	Index int `json:"-"`
	// Method is the backend method from implementation.methods, "" when
	// the manifest maps none.
	Method string `json:"-"`
	// Broken is true when the tool has an error-level problem: it is not
	// served, and its fields may be incomplete (Name is set when the
	// manifest gives one).
	Broken bool `json:"-"`
}

// Annotations are a tool's behaviour hints.
type Annotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    *bool  `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint"`
	IdempotentHint  *bool  `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint"`
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
