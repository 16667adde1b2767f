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
// terminal; as JSON lines otherwise.
func newLogger(w io.Writer, level, format string) zerolog.Logger {
	lvl, err := parseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	if format == "console" || format == "auto" && isTerminal(w) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
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
