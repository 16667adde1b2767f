package manifest

import (
	stdjson "encoding/json"
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// CompileSchemas compiles the tool's input schema and its output schema
// (nil when the tool declares none). Nothing is loaded from the network or
// the file system. For a tool Parse found servable it does not fail.
func CompileSchemas(t *Tool) (in, out *jsonschema.Schema, err error) {
	return compileTool(t.file, t)
}

// numbersAsJSONNumber keeps numbers as json.Number, the type the schema
// library requires: it compares them exactly, never as float64.
var numbersAsJSONNumber = json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported // anything else decodes as usual
	}
	num, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*v = stdjson.Number(num)
	return nil
}))

// DecodeValue decodes one JSON value as the schema library expects it:
// objects as map[string]any, arrays as []any, numbers as json.Number
// (from encoding/json). Duplicate names, invalid UTF-8 and data after the
// value are errors.
func DecodeValue(data []byte) (any, error) {
	var v any
	if err := json.Unmarshal(data, &v, numbersAsJSONNumber); err != nil {
		return nil, err
	}
	return v, nil
}
