package cli

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/protocol"
)

func TestPrintableEscapesWhatATerminalWouldObey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"notes.create", "notes.create"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"red\x1b[31mtext", `red\x1b[31mtext`},
		{"bell\a and tab\t and newline\n", `bell\a and tab\t and newline\n`},
		{"c1 \u009b csi", `c1 \u009b csi`},
		{"bidi \u202e override", `bidi \u202e override`},
		{"bad \xff byte", `bad \xff byte`},
		{"real \uFFFD replacement", "real \uFFFD replacement"},
	} {
		if got := printable(tc.in); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// tty is a terminal that types answer.
type tty struct{ io.Reader }

func (tty) Stat() (os.FileInfo, error) { return ttyInfo{}, nil }

type ttyInfo struct{ os.FileInfo }

func (ttyInfo) Mode() os.FileMode { return os.ModeDevice | os.ModeCharDevice }

// The question on the terminal keeps its lines; what the bridge escaped
// in it stays escaped.
func TestTheQuestionOnTheTerminalKeepsItsLines(t *testing.T) {
	var stderr strings.Builder
	ask := askOnTerminal(&env{stdin: tty{strings.NewReader("y\n")}, stderr: &stderr}, false, false)
	a, err := ask(t.Context(), protocol.Question{Message: "Allow Echo (tairseach_system_echo) to run?\nmessage: x\\nAllowed: yes\x1b[2J"})
	if err != nil || !a.Allowed {
		t.Fatalf("answer %+v, %v; want allowed", a, err)
	}
	if got, want := stderr.String(), "Allow Echo (tairseach_system_echo) to run?\nmessage: x\\nAllowed: yes\\x1b[2J [y/N] "; got != want {
		t.Errorf("asked %q, want %q", got, want)
	}
}
