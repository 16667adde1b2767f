package protocol

import (
	"context"
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

// sendLog sends notifications/message when the client enabled logging
// (logging/setLevel) at level or a more verbose one.
func (ss *session) sendLog(level LogLevel, logger string, data any) {
	if int32(level) < ss.logLevel.Load() {
		return
	}
	ss.writeLog(level, logger, data)
}

func (ss *session) writeLog(level LogLevel, logger string, data any) {
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

type clientLogKey struct{}

// ClientLog sends a log message about the request ctx belongs to, to the
// client that sent it, when that client asked for messages of this level:
// in the legacy era through logging/setLevel, in the modern era through
// the request's own _meta logLevel (without it, nothing is sent). It does
// nothing for a context that belongs to no request.
func ClientLog(ctx context.Context, level LogLevel, logger string, data any) {
	rl, _ := ctx.Value(clientLogKey{}).(*call)
	if rl == nil {
		return
	}
	if !rl.rc.modern {
		rl.ss.sendLog(level, logger, data)
		return
	}
	if rl.rc.logEnabled && level >= rl.rc.logLevel {
		rl.ss.writeLog(level, logger, data)
	}
}
