package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

const exampleManifests = "../../manifests-example"

// exampleManifest is the part of a manifest this test needs.
type exampleManifest struct {
	ID        string `json:"id"`
	Resources []struct {
		URI    string `json:"uri"`
		Method string `json:"method"`
	} `json:"resources"`
	ResourceTemplates []struct {
		URITemplate string            `json:"uriTemplate"`
		Method      string            `json:"method"`
		Complete    map[string]string `json:"complete"`
	} `json:"resourceTemplates"`
	Prompts []struct {
		Name     string            `json:"name"`
		Complete map[string]string `json:"complete"`
	} `json:"prompts"`
	Tools []struct {
		Name           string          `json:"name"`
		InputSchema    json.RawMessage `json:"inputSchema"`
		OutputSchema   json.RawMessage `json:"outputSchema"`
		MCPExpose      *bool           `json:"mcpExpose"`
		MCPExposeSnake *bool           `json:"mcp_expose"`
	} `json:"tools"`
	Implementation struct {
		Methods map[string]string `json:"methods"`
	} `json:"implementation"`
}

// compileSchema compiles a draft 2020-12 schema that must not load
// anything, asserting formats (date-time) too.
func compileSchema(t *testing.T, url string, schema []byte) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(s string) (io.ReadCloser, error) { return nil, fmt.Errorf("no loading (%s)", s) }
	if err := c.AddResource(url, bytes.NewReader(schema)); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return s
}

// decodeJSON decodes b as the validator wants it: numbers as json.Number.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestExampleManifestsMatchBackend(t *testing.T) {
	root, _ := sharedFolder(t)
	ts := startServer(t, serverConfig{root: root})
	c := ts.dial(t)
	forGet := result[note](t, c, "notes.create", map[string]any{"title": "for get", "body": "b"})
	forDelete := result[note](t, c, "notes.create", map[string]any{"title": "for delete"})
	methods := ts.srv.d.methods

	// Plausible arguments for every tool with an outputSchema, as a model
	// would send them; they must also pass the tool's inputSchema.
	args := map[string]string{
		"notes.create":  `{"title":"groceries","body":"oat milk, bread"}`,
		"notes.list":    `{"query":"for","limit":10}`,
		"notes.get":     `{"id":"` + forGet.ID + `"}`,
		"notes.delete":  `{"id":"` + forDelete.ID + `"}`,
		"system.info":   `{}`,
		"system.status": `{}`,
		"system_echo":   `{"message":"hello","extra":[1,2.5,{"x":null}]}`,
		"files.list":    `{"path":".","include_hidden":true}`,
		"debug.sleep":   `{"ms":1}`,
		"notes.import":  `{"count":1,"delay_ms":0}`,
	}

	var format *jsonschema.Schema
	if b, err := os.ReadFile("../../manifest/manifest.schema.json"); err == nil {
		format = compileSchema(t, "https://example.invalid/manifest.schema.json", b)
	} else {
		t.Logf("not checking the manifest format: %v", err)
	}

	var files []string
	err := filepath.WalkDir(exampleManifests, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d manifests in %s: %v", len(files), exampleManifests, files)
	}

	called := map[string]bool{}
	for _, file := range files {
		rel, _ := filepath.Rel(exampleManifests, file)
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if format != nil {
				if err := format.Validate(decodeJSON(t, b)); err != nil {
					t.Errorf("not a valid manifest: %v", err)
				}
			}
			var m exampleManifest
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			// Resources, templates and completions call backend methods
			// too (the bridge's own tests read and complete them).
			var calls []string
			for _, r := range m.Resources {
				if r.Method != "" {
					calls = append(calls, r.URI+" calls "+r.Method)
				}
			}
			for _, tpl := range m.ResourceTemplates {
				calls = append(calls, tpl.URITemplate+" calls "+tpl.Method)
				for arg, method := range tpl.Complete {
					calls = append(calls, tpl.URITemplate+" completes "+arg+" with "+method)
				}
			}
			for _, p := range m.Prompts {
				for arg, method := range p.Complete {
					calls = append(calls, p.Name+" completes "+arg+" with "+method)
				}
			}
			for _, c := range calls {
				if method := c[strings.LastIndexByte(c, ' ')+1:]; methods[method] == nil {
					t.Errorf("%s, which the backend does not have", c)
				}
			}
			for i, tool := range m.Tools {
				method, mapped := m.Implementation.Methods[tool.Name]
				exposed := (tool.MCPExpose == nil || *tool.MCPExpose) && (tool.MCPExposeSnake == nil || *tool.MCPExposeSnake)
				if !exposed || !mapped {
					if len(tool.OutputSchema) > 0 {
						t.Errorf("%s has an outputSchema but is not served", tool.Name)
					}
					continue
				}
				if _, ok := methods[method]; !ok {
					t.Errorf("%s maps to %q, which the backend does not have", tool.Name, method)
					continue
				}
				if len(tool.OutputSchema) == 0 {
					continue
				}
				a, ok := args[tool.Name]
				if !ok {
					t.Errorf("%s has an outputSchema: add arguments for it to the test table", tool.Name)
					continue
				}
				loc := fmt.Sprintf("file:///manifests-example/%s.tools.%d", filepath.ToSlash(rel), i)
				if err := compileSchema(t, loc+".inputSchema.json", tool.InputSchema).Validate(decodeJSON(t, []byte(a))); err != nil {
					t.Errorf("%s: the test's arguments %s fail the inputSchema: %v", tool.Name, a, err)
				}
				out := compileSchema(t, loc+".outputSchema.json", tool.OutputSchema)
				r := c.call(method, a)
				called[tool.Name] = true
				if r.Error != nil {
					t.Errorf("%s %s: error %d %q %s", tool.Name, a, r.Error.Code, r.Error.Message, r.Error.Data)
					continue
				}
				if err := out.Validate(decodeJSON(t, r.Result)); err != nil {
					var ve *jsonschema.ValidationError
					if errors.As(err, &ve) {
						err = fmt.Errorf("%#v", ve)
					}
					t.Errorf("%s: result %s does not conform to the outputSchema: %v", tool.Name, r.Result, err)
				}
			}
		})
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !called[name] {
			t.Errorf("the test has arguments for %s, but no manifest serves it with an outputSchema", name)
		}
	}
}
