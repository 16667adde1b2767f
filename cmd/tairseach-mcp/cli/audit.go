package cli

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// auditOptions are the settings of the audit log.
type auditOptions struct {
	path    string // absolute; "" when off
	values  bool
	maxSize int
	keep    int
}

// minAuditSize bounds --audit-max-size: below it, the log would rotate at
// almost every write.
const minAuditSize = 64 << 10

// defaultAuditLog is where install --audit puts the log.
func defaultAuditLog(home string) string { return filepath.Join(home, ".tairseach", "audit.log") }

func (a *auditOptions) resolve(home string) error {
	if a.maxSize < minAuditSize {
		return usageError{fmt.Errorf("--audit-max-size must be at least 64KiB, not %s", sizeValue{&a.maxSize})}
	}
	if a.keep < 1 {
		return usageError{fmt.Errorf("--audit-keep must be at least 1, not %d", a.keep)}
	}
	if a.path == "" {
		if a.values {
			return usageError{fmt.Errorf("--audit-values needs --audit-log: the values go into the audit log")}
		}
		return nil
	}
	// Clients start the bridge in a folder of their choosing.
	p, err := filepath.Abs(expandHome(a.path, home))
	if err != nil {
		return usageError{fmt.Errorf("--audit-log: %w", err)}
	}
	a.path = p
	return nil
}

// openAudit starts the audit log when one is set. It returns the recorder
// for the registry (nil when off) and the function that writes what is
// queued and closes it, at exit.
func openAudit(a auditOptions, log *zerolog.Logger) (registry.Recorder, func()) {
	if a.path == "" {
		return nil, func() {}
	}
	if a.values {
		log.Warn().Str("audit_log", a.path).Msg("--audit-values: the audit log records the arguments' values, secrets redacted by name and schema; keep it private")
	}
	w := audit.NewWriter(a.path, audit.Options{MaxSize: int64(a.maxSize), Keep: a.keep, Logger: log})
	log.Debug().Str("audit_log", a.path).Msg("recording every call in the audit log")
	return w, func() {
		if err := w.Close(); err != nil {
			log.Error().Err(err).Msg("audit log not flushed")
		}
	}
}

// checkAudit says whether calls are recorded, where, and whether the
// bridge can write there.
func checkAudit(a auditOptions) result {
	r := result{Name: "audit log"}
	if a.path == "" {
		return r.info("off: calls are not recorded (--audit-log FILE records them, for 'tairseach-mcp stats'; docs/audit.md)", "")
	}
	st, err := audit.Check(a.path)
	if err != nil {
		return r.fail(fmt.Sprintf("on, but %s cannot be written: %v", a.path, err),
			"fix the path or its permissions; until then calls are served and not recorded")
	}
	msg := fmt.Sprintf("on: %s, to be created; rotated at %s, %s kept", a.path, byteSize(int64(a.maxSize)), plural(a.keep, "file"))
	if st.Exists {
		msg = fmt.Sprintf("on: %s, %s and %s, writable", a.path, byteSize(st.Size), plural(st.Rotated, "rotated file"))
	}
	if a.values {
		msg += "; argument values recorded, secrets redacted"
	}
	if st.Mode&0o077 != 0 {
		return r.warn(fmt.Sprintf("%s; readable by others (%v)", msg, st.Mode), "chmod 600 "+a.path)
	}
	return r.ok(msg)
}

// byteSize shows a number of bytes with a binary unit.
func byteSize(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return strconv.FormatInt(n, 10) + "B"
	}
	f, i := float64(n)/1024, 0
	for ; f >= 1024 && i < len(units)-1; i++ {
		f /= 1024
	}
	if f < 10 {
		return strconv.FormatFloat(f, 'f', 1, 64) + units[i:i+1]
	}
	return strconv.FormatFloat(f, 'f', 0, 64) + units[i:i+1]
}
