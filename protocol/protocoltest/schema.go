// Package protocoltest checks MCP messages against the official JSON
// Schema of each protocol version, for tests of anything that writes MCP.
// The schemas live outside the repository, in ../shared/mcp-schema beside
// the project's root. Where they are missing, as in a clone with nothing
// beside it, a Checker checks only that each line is JSON, the tests
// that use it run all the same, and this package's own test skips, which
// is the one place that says so; under CI (CI=true, or
// TAIRSEACH_REQUIRE_SCHEMAS=1) every check fails instead.
package protocoltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// strictDefs are the definitions checked strictly: a property the
// version's schema does not declare is an error, which is how the tests
// prove that results are shaped for the negotiated version. Definitions
// whose members are open by design (schemas, _meta) are not listed.
var strictDefs = []string{
	"Tool", "ToolAnnotations", "CallToolResult", "ListToolsResult", "InitializeResult",
	"Implementation", "ServerCapabilities", "TextContent", "DiscoverResult",
	"ListResourcesResult", "ListResourceTemplatesResult", "ListPromptsResult",
	"Resource", "ResourceTemplate", "Annotations", "ReadResourceResult", "TextResourceContents", "BlobResourceContents",
	"Prompt", "PromptArgument", "GetPromptResult", "PromptMessage", "EmbeddedResource", "CompleteResult",
	"JSONRPCResponse", "JSONRPCResultResponse", "JSONRPCError", "JSONRPCErrorResponse", "JSONRPCNotification",
	"SubscriptionsListenResult", "Task", "CreateTaskResult", "ListTasksResult",
}

// resultDefs names the result definition of each method the bridge answers.
var resultDefs = map[string]string{
	"initialize":               "InitializeResult",
	"ping":                     "EmptyResult",
	"logging/setLevel":         "EmptyResult",
	"tools/list":               "ListToolsResult",
	"tools/call":               "CallToolResult",
	"resources/list":           "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult",
	"resources/read":           "ReadResourceResult",
	"prompts/list":             "ListPromptsResult",
	"prompts/get":              "GetPromptResult",
	"completion/complete":      "CompleteResult",
	"server/discover":          "DiscoverResult",
	"subscriptions/listen":     "SubscriptionsListenResult",
	"tasks/get":                "GetTaskResult",
	"tasks/cancel":             "CancelTaskResult",
	"tasks/list":               "ListTasksResult",
	"tasks/result":             "CallToolResult", // a tools/call's, with _meta naming its task
}

// extTasks names the folder, beside the versions', of the schema of
// 2026-07-28's tasks extension, whose results and notification the core
// schema does not have.
const extTasks = "ext-tasks"

// extResultDefs names the extension's definition of each result of a
// 2026-07-28 tasks method.
var extResultDefs = map[string]string{
	"tasks/get":    "GetTaskResult",
	"tasks/update": "UpdateTaskResult",
	"tasks/cancel": "CancelTaskResult",
}

// requestDefs name the schema definition of each request the server may
// send the client.
var requestDefs = map[string]string{
	"elicitation/create":     "ElicitRequest",
	"sampling/createMessage": "CreateMessageRequest",
	"roots/list":             "ListRootsRequest",
}

// notificationDefs names the definition of each notification the bridge sends.
var notificationDefs = map[string]string{
	"notifications/cancelled":                  "CancelledNotification",
	"notifications/message":                    "LoggingMessageNotification",
	"notifications/progress":                   "ProgressNotification",
	"notifications/tools/list_changed":         "ToolListChangedNotification",
	"notifications/prompts/list_changed":       "PromptListChangedNotification",
	"notifications/resources/list_changed":     "ResourceListChangedNotification",
	"notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
	"notifications/tasks/status":               "TaskStatusNotification", // 2025-11-25
	"notifications/tasks":                      "TaskStatusNotification", // the 2026-07-28 extension's
}

// Dir returns the folder holding the schemas, or "" when it is missing.
func Dir() string { return dir() }

var dir = sync.OnceValue(func() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			dir := filepath.Join(d, "..", "shared", "mcp-schema")
			if _, err := os.Stat(dir); err == nil {
				return dir
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
})

// Required reports whether missing schemas are a failure: under CI
// (CI=true, as CI services set it) or with TAIRSEACH_REQUIRE_SCHEMAS=1.
func Required() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci || os.Getenv("TAIRSEACH_REQUIRE_SCHEMAS") == "1"
}

// errMissing is every check's failure when the schemas are missing and
// Required.
var errMissing = errors.New("the official MCP schemas (../shared/mcp-schema beside the project) are missing, and CI requires them")

// versionSchemas compiles definitions of one version on demand.
type versionSchemas struct {
	version string
	url     string
	defsKey string // "definitions" or "$defs"
	c       *jsonschema.Compiler
	mu      sync.Mutex
	byDef   map[string]*jsonschema.Schema
}

var (
	loadedMu sync.Mutex
	loaded   = map[string]*versionSchemas{}
)

func schemasFor(version string) (*versionSchemas, error) {
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if vs, ok := loaded[version]; ok {
		return vs, nil
	}
	dir := Dir()
	if dir == "" {
		return nil, fmt.Errorf("MCP schemas not found")
	}
	data, err := os.ReadFile(filepath.Join(dir, version, "schema.json"))
	if err != nil {
		return nil, fmt.Errorf("no schema for protocol version %s: %w", version, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	defsKey := "definitions"
	if _, ok := doc["$defs"]; ok {
		defsKey = "$defs"
	}
	defs, _ := doc[defsKey].(map[string]any)
	for _, name := range strictDefs {
		d, ok := defs[name].(map[string]any)
		if !ok {
			continue
		}
		if _, hasProps := d["properties"]; !hasProps {
			continue
		}
		if _, set := d["additionalProperties"]; !set {
			d["additionalProperties"] = false
		}
	}
	patched, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	url := "https://modelcontextprotocol.io/schema/" + version + "/schema.json"
	if id, ok := doc["$id"].(string); ok {
		url = id // the extension's names itself
	}
	c := jsonschema.NewCompiler()
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("remote schema %s", s)
	}
	if err := c.AddResource(url, bytes.NewReader(patched)); err != nil {
		return nil, err
	}
	vs := &versionSchemas{version: version, url: url, defsKey: defsKey, c: c, byDef: map[string]*jsonschema.Schema{}}
	loaded[version] = vs
	return vs, nil
}

func (vs *versionSchemas) def(name string) (*jsonschema.Schema, error) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if s, ok := vs.byDef[name]; ok {
		return s, nil
	}
	s, err := vs.c.Compile(vs.url + "#/" + vs.defsKey + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("%s has no definition %s: %w", vs.version, name, err)
	}
	vs.byDef[name] = s
	return s, nil
}

func (vs *versionSchemas) has(name string) bool {
	_, err := vs.def(name)
	return err == nil
}

func (vs *versionSchemas) validate(name string, v any) error {
	s, err := vs.def(name)
	if err != nil {
		return err
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("not a valid %s %s: %s", vs.version, name, flatten(err))
	}
	return nil
}

func flatten(err error) string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	var parts []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			parts = append(parts, e.InstanceLocation+": "+e.Message)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(parts, "; ")
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after the message")
	}
	return v, nil
}
