package socketclient

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/go-json-experiment/json/jsontext"
)

// Errors a Call returns, to be compared with errors.Is. Every error from
// Call wraps at most one of them; a failure that is the context's (timeout,
// cancellation) wraps the context's error instead, so
// errors.Is(err, context.DeadlineExceeded) holds after a timeout.
var (
	// ErrUnavailable means no request reached the backend: the socket is
	// missing or refuses connections, the peer checks failed, or the
	// backend had closed the connection before any byte of the request
	// was sent. The error names the socket and the reason, e.g. "backend
	// unavailable at /run/t.sock: no socket there; is the backend running?".
	ErrUnavailable = errors.New("backend unavailable")

	// ErrBusy means no request reached the backend because it accepted
	// no connection within Options.DialTimeout: its socket is there and
	// something listens on it, but its queue of connections waiting to
	// be accepted stayed full. The backend is overloaded or hung, not
	// down.
	ErrBusy = errors.New("backend busy")

	// ErrBadReply means the request was sent, or may have been, but no
	// valid reply came back: the reply was not JSON-RPC, answered another
	// id, was longer than Options.MaxReplySize, or the connection failed
	// or closed before the reply was complete. The backend may or may not
	// have carried out the request, so it is never sent again.
	ErrBadReply = errors.New("bad reply from backend")

	// ErrClosed means the Client was closed before or during the call.
	ErrClosed = errors.New("backend client closed")
)

// SocketPathError is wrapped by the ErrUnavailable error of a Client
// whose socket path holds no socket: nothing at all (then it also
// matches fs.ErrNotExist), or something else, which Kind names.
type SocketPathError struct {
	// Kind is what is at the path, such as "a named pipe", "a device",
	// "a folder" or "a regular file"; "" when nothing is.
	Kind string
}

// Error says what is at the path: "no socket there; is the backend
// running?", or "a named pipe, not a socket".
func (e *SocketPathError) Error() string {
	if e.Kind == "" {
		return "no socket there; is the backend running?"
	}
	return e.Kind + ", not a socket"
}

// Unwrap returns fs.ErrNotExist when nothing is at the path.
func (e *SocketPathError) Unwrap() error {
	if e.Kind == "" {
		return fs.ErrNotExist
	}
	return nil
}

// RPCError is a JSON-RPC error object the backend answered with, such as
// code -32011 "Permission denied". Call returns it as *RPCError.
type RPCError struct {
	// Code is the JSON-RPC error code.
	Code int64
	// Message is the backend's short description.
	Message string
	// Data is the optional "data" member as the backend sent it (see
	// Client.Call about invalid UTF-8); nil when absent.
	Data jsontext.Value
}

// Error reports the code and message, as "backend error <code>: <message>".
func (e *RPCError) Error() string {
	return fmt.Sprintf("backend error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *RPCError with the same code, so
// errors.Is(err, &RPCError{Code: -32011}) matches any permission error.
func (e *RPCError) Is(target error) bool {
	t, ok := target.(*RPCError)
	return ok && t != nil && t.Code == e.Code
}
