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
	"regexp"
	"slices"

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
	// Confirm is what the manifest says of asking the user before each
	// call; nil when it says nothing.
	Confirm *Confirm `json:"confirm"`
	// Execution says how the tool's calls may run; nil when the manifest
	// says nothing (never as tasks).
	Execution *Execution `json:"execution"`
	// MCPExpose and MCPExposeSnake are the two spellings of the same flag
	// found in real manifests; use Exposed.
	MCPExpose      *bool `json:"mcpExpose"`
	MCPExposeSnake *bool `json:"mcp_expose"`

	// Index is the tool's position in the manifest's tools array.
	Index int `json:"-"`
	// Method is the backend method from implementation.methods, "" when
	// the manifest maps none.
	Method string `json:"-"`
	// Headers are the parameters that the inputSchema marks with
	// x-mcp-header, in the order of their paths; none when the tool is
	// Broken.
	Headers []Header `json:"-"`
	// Broken is true when the tool has an error-level problem: it is not
	// served, and its fields may be incomplete (Name is set when the
	// manifest gives one).
	Broken bool `json:"-"`
}

// Execution is a tool's "execution": whether its calls may run as tasks.
type Execution struct {
	// TaskSupport is "forbidden" (or "", the default), "optional" or
	// "required", as MCP 2025-11-25's ToolExecution names them.
	TaskSupport string `json:"taskSupport"`
}

// Confirm is a manifest's "confirm" of a tool: true, false, or the
// question to ask, which implies true.
type Confirm struct {
	Ask bool
	// Template is the question, with {argument} placeholders; "" for the
	// bridge's own wording.
	Template string
}

// UnmarshalJSONFrom reads a boolean or a string.
func (c *Confirm) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 't', 'f':
		c.Ask, c.Template = tok.Bool(), ""
	case '"':
		c.Ask, c.Template = true, tok.String()
	default:
		return fmt.Errorf("confirm must be a boolean or a string, not %s", tok.Kind())
	}
	return nil
}

// Placeholders returns the argument names a confirmation template
// names, in order, each once.
func (c *Confirm) Placeholders() []string {
	if c == nil {
		return nil
	}
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(c.Template, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// placeholder matches {argument} in a confirmation template.
var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_.$-]+)\}`)

// FillTemplate returns a confirmation template with each placeholder
// replaced by what value returns for its name.
func FillTemplate(template string, value func(name string) string) string {
	return placeholder.ReplaceAllStringFunc(template, func(m string) string {
		return value(m[1 : len(m)-1])
	})
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
