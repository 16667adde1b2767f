package cli

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tairseach/tairseach-mcp/protocol"
)

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
