package manifest

import (
	"bytes"
	"context"
	_ "embed"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ClientsSchemaJSON is the format of a bridge's clients file (its named
// clients, their tokens' hashes and their policies) as a JSON Schema
// (draft 2020-12), published beside the manifest format for editors as
// manifest/clients.schema.json. The file is read by package
// registry/clients; its format is here, with the manifests', so that
// both are checked alike.
//
//go:embed clients.schema.json
var ClientsSchemaJSON []byte

const clientsSchemaURL = "https://github.com/tairseach/tairseach-mcp/manifest/clients.schema.json"

// clientsSchema compiles the embedded clients format once per process.
var clientsSchema = sync.OnceValue(func() *Schema {
	s, err := newSchema(func(c *jsonschema.Compiler) (*jsonschema.Schema, error) {
		if err := c.AddResource(clientsSchemaURL, bytes.NewReader(ClientsSchemaJSON)); err != nil {
			return nil, err
		}
		return c.Compile(clientsSchemaURL)
	})
	if err != nil {
		panic("manifest: embedded clients schema: " + err.Error())
	}
	return s
})

// CheckClients checks the contents of a clients file against
// ClientsSchemaJSON, within the default limits. It returns the
// violations, none when the file fits, or an error when it cannot be
// checked (it is not JSON, or past a limit).
func CheckClients(data []byte) ([]Violation, error) {
	return clientsSchema().Check(context.Background(), defaultDecoder, data)
}
