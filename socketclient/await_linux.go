package socketclient

import (
	"os"
	"syscall"
)

// writeAwait sends a request and returns once its reply can be read, or
// on failure to send. Go's own Write and Read would spend a system call on
// a read that cannot succeed yet, the backend not having seen the request:
// this writes from inside the wait for readability instead, after the
// poller's read readiness was reset, so a reply that arrives at once is
// not missed. What the socket does not take at once is finished with an
// ordinary Write, and the reply is then read the ordinary way.
//
// A failed wait (the deadline moved to the past, the connection closed)
// comes after the request went out, so it is the read's failure, not the
// send's: the read meets it again at once and reports it.
//
// Linux only: the wait forgets readiness seen before it, such as the end
// of a connection the backend half-closed while idle. On Linux the
// backend reading the request reports that end again, so such a call
// fails at once (a backend that also stops reading leaves it to the call's
// timeout); kqueue would not report it again, so other systems write and
// read the ordinary way.
func writeAwait(cn *conn, req []byte) error {
	if cn.raw == nil {
		_, err := cn.c.Write(req)
		return err
	}
	if cn.sendStep == nil {
		// Made once per connection: a closure per call would cost
		// allocations on the hot path.
		cn.sendStep = func(fd uintptr) bool { return cn.step(fd) }
	}
	cn.pending, cn.werr, cn.written = req, nil, false
	_ = cn.raw.Read(cn.sendStep)
	req, err := cn.pending, cn.werr
	cn.pending, cn.werr = nil, nil
	if err == nil && len(req) > 0 {
		_, err = cn.c.Write(req)
	}
	return err
}

// step is writeAwait's work each time the descriptor is offered: first
// the write, then, once it is readable, the end of the wait.
func (cn *conn) step(fd uintptr) bool {
	if cn.written {
		return true // readable: the reply, or the peer closing
	}
	for len(cn.pending) > 0 {
		n, err := syscall.Write(int(fd), cn.pending)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			if err != syscall.EAGAIN {
				cn.werr = os.NewSyscallError("write", err)
			}
			return true
		}
		cn.pending = cn.pending[n:]
	}
	cn.written = true
	return false // wait for the reply
}
