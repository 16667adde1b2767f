package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/protocol"
)

func parseLevel(s string) (zerolog.Level, error) {
	switch s {
	case "trace", "debug", "info", "warn", "error":
		return zerolog.ParseLevel(s)
	}
	return zerolog.NoLevel, fmt.Errorf("unknown log level %q: use trace, debug, info, warn or error", s)
}

// newLogger builds the process's only root logger. It writes to w
// (stderr), as console text when format is console, or auto and w is a
// terminal; as JSON lines otherwise. Lines go through a logBuffer, so
// that a stderr nobody reads never blocks a caller: flush writes what is
// left, within a bound, and must be called once logging is over.
func newLogger(w io.Writer, level, format string) (log zerolog.Logger, flush func()) {
	lvl, err := parseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	formatted := func(out io.Writer) io.Writer { return out }
	if format == "console" || format == "auto" && isTerminal(w) {
		formatted = func(out io.Writer) io.Writer { return zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly} }
	}
	// The buffer's writer reports lines it dropped straight to w, in the
	// same format: it is the one goroutine that writes there.
	direct := zerolog.New(formatted(w)).With().Timestamp().Logger()
	buf := newLogBuffer(w, logBufferSize, func(n int) {
		direct.Warn().Int("dropped", n).Msg("log lines dropped: stderr was not read fast enough")
	})
	return zerolog.New(formatted(buf)).Level(lvl).With().Timestamp().Logger(), buf.Close
}

// isTerminal tells whether f, stdin or stderr, is a terminal.
func isTerminal(f any) bool {
	s, ok := f.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := s.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// clientLevel maps a log level to the MCP one used for notifications/message.
func clientLevel(l zerolog.Level) protocol.LogLevel {
	switch l {
	case zerolog.TraceLevel, zerolog.DebugLevel:
		return protocol.LevelDebug
	case zerolog.InfoLevel:
		return protocol.LevelInfo
	case zerolog.WarnLevel:
		return protocol.LevelWarning
	default:
		return protocol.LevelError
	}
}
