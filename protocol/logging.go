package protocol

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// LogLevel is an MCP (syslog) log level; higher is more severe.
type LogLevel int32

// MCP log levels, least severe first.
const (
	LevelDebug LogLevel = iota
	LevelInfo
	LevelNotice
	LevelWarning
	LevelError
	LevelCritical
	LevelAlert
	LevelEmergency
)

// logOff is above every level: nothing is sent.
const logOff = LevelEmergency + 1

var levelNames = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// String returns the MCP name of the level, e.g. "warning".
func (l LogLevel) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("LogLevel(%d)", int32(l))
	}
	return levelNames[l]
}

// ParseLogLevel parses an MCP level name.
func ParseLogLevel(s string) (LogLevel, error) {
	for i, n := range levelNames {
		if n == s {
			return LogLevel(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown log level %q (want one of debug, info, notice, warning, error, critical, alert, emergency)", ErrInvalidParams, s)
}

type logParams struct {
	Level  string         `json:"level"`
	Logger string         `json:"logger,omitzero"`
	Data   jsontext.Value `json:"data"`
}

// sendLog sends notifications/message to out, when there is room.
func (ss *Session) sendLog(out Sink, level LogLevel, logger string, data any) {
	d, err := json.Marshal(data, encodeOpts)
	if err != nil {
		d, _ = json.Marshal(fmt.Sprint(data), encodeOpts)
	}
	ss.notify(out, encodeNotification("notifications/message", &logParams{Level: level.String(), Logger: logger, Data: d}), nil)
}

// maxLogged bounds, in bytes, a client's string in a field of a log line.
const maxLogged = 200
