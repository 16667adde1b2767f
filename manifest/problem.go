package manifest

import (
	"fmt"
	"strings"
)

// Severity says whether a problem stops something from being served.
type Severity int

const (
	// Warning: served, but the author should know.
	Warning Severity = iota
	// Error: the file (when Tool is empty) or the tool is not served.
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
	Path     string   `json:"path,omitempty"` // JSON path inside the file, e.g. tools[2].inputSchema.type
	Tool     string   `json:"tool,omitempty"` // the manifest's tool name, when the problem is about one tool
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

// pointerToPath turns a JSON pointer (/tools/2/name) into a JSON path (tools[2].name).
func pointerToPath(ptr string) string {
	if ptr == "" || ptr == "/" {
		return ""
	}
	var b strings.Builder
	for i, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if isIndex(seg) {
			fmt.Fprintf(&b, "[%s]", seg)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
