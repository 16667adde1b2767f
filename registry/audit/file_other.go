//go:build !unix

package audit

import "errors"

// logFile cannot be shared safely on this OS: it has no flock and no
// O_NOFOLLOW, which the log relies on.
type logFile struct {
	path    string
	maxSize int64
	keep    int
}

var errUnsupported = errors.New("audit logs need a Unix system (Linux, macOS)")

func (*logFile) write([]byte) error { return errUnsupported }
func (*logFile) open() error        { return errUnsupported }
func (*logFile) close()             {}

// Check says that this OS cannot write an audit log.
func Check(string) (State, error) { return State{}, errUnsupported }
