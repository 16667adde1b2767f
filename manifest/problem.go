package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Severity says whether a problem stops something from being served.
type Severity int

const (
	// Warning: served, but the author should know.
	Warning Severity = iota
	// Error: the file (when the problem is about no tool, resource or
	// prompt) or the item it is about is not served.
	Error
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// MarshalText makes severities read as words in JSON output.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Problem is one finding about a manifest file.
type Problem struct {
	File     string   `json:"file"`
	Path     string   `json:"path,omitempty"`     // JSON path inside the file, e.g. tools[2].inputSchema.type
	Tool     string   `json:"tool,omitempty"`     // the manifest's tool name, when the problem is about one tool
	Resource string   `json:"resource,omitempty"` // the URI or URI template, when it is about a resource or template
	Prompt   string   `json:"prompt,omitempty"`   // the manifest's prompt name, when it is about one prompt
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// String formats the problem as file:path: severity: message.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Path != "" {
		b.WriteString(":")
		b.WriteString(p.Path)
	}
	fmt.Fprintf(&b, ": %s: %s", p.Severity, p.Message)
	return b.String()
}

// HasErrors reports whether any problem is an error.
func HasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// pointerToPath turns a JSON pointer (/tools/2/name) into a JSON path
// (tools[2].name).
func pointerToPath(ptr string) string {
	var path string
	for tok := range jsontext.Pointer(ptr).Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 0); err == nil {
			path += "[" + tok + "]"
		} else {
			path = joinPath(path, tok)
		}
	}
	return path
}

// joinPath appends the JSON path rel to path.
func joinPath(path, rel string) string {
	if path == "" || rel == "" || rel[0] == '[' {
		return path + rel
	}
	return path + "." + rel
}

// decodeProblem words an error of the strict decode of a part of a
// manifest whose syntax was found valid: a repeated name or invalid
// UTF-8. It returns where the problem is, as a JSON path relative to the
// part.
func decodeProblem(err error) (path, msg string) {
	var le *LimitError
	if errors.As(err, &le) {
		return "", "it " + le.Error()
	}
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return "", err.Error()
	}
	path = pointerToPath(string(se.JSONPointer))
	if errors.Is(err, jsontext.ErrDuplicateName) {
		return path, fmt.Sprintf("%q appears twice; a name may appear only once", se.JSONPointer.LastToken())
	}
	return path, se.Err.Error()
}

// syntaxProblem words a syntax error in data with the line and column
// where it is.
func syntaxProblem(data []byte, err error) string {
	var se *jsontext.SyntacticError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the file is empty or ends too early"
	case errors.As(err, &se):
		off := min(int(se.ByteOffset), len(data))
		line := bytes.Count(data[:off], []byte{'\n'}) + 1
		col := off - bytes.LastIndexByte(data[:off], '\n')
		return fmt.Sprintf("line %d, column %d: %v", line, col, se.Err)
	}
	return err.Error()
}
