package protocol

import (
	"encoding/json"
	"fmt"
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

const logOff = int32(LevelEmergency) + 1

var levelNames = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

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

// log sends notifications/message to the client when it asked for this level.
func (ss *session) sendLog(level LogLevel, logger string, data any) {
	if int32(level) < ss.logLevel.Load() {
		return
	}
	d, err := json.Marshal(data)
	if err != nil {
		d, _ = json.Marshal(fmt.Sprint(data))
	}
	params := []byte(`{"level":`)
	params = appendString(params, level.String())
	if logger != "" {
		params = append(params, `,"logger":`...)
		params = appendString(params, logger)
	}
	params = append(params, `,"data":`...)
	params = append(params, d...)
	params = append(params, '}')
	ss.send(appendNotification(nil, "notifications/message", params))
}
