//go:build unix

package main

import (
	"os"
	"syscall"
)

// socketStdio returns this side's ends of two socket pairs, for the
// stdin and the stdout of a child, and the child's ends (theirs), which
// the caller closes once the child has started.
func socketStdio() (stdin, stdout *os.File, theirs []*os.File, err error) {
	var ends [2][2]int
	for i := range ends {
		// Close-on-exec, or the child would hold its own input open
		// (SOCK_CLOEXEC is Linux's; ForkLock keeps an exec from
		// inheriting the ends before they are marked).
		syscall.ForkLock.RLock()
		ends[i], err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.CloseOnExec(ends[i][0])
			syscall.CloseOnExec(ends[i][1])
		}
		syscall.ForkLock.RUnlock()
		if err != nil {
			return nil, nil, nil, err
		}
		// Non-blocking, so that os.NewFile puts this end in the poller
		// and read deadlines work.
		if err = syscall.SetNonblock(ends[i][0], true); err != nil {
			return nil, nil, nil, err
		}
	}
	return os.NewFile(uintptr(ends[0][0]), "stdin"), os.NewFile(uintptr(ends[1][0]), "stdout"),
		[]*os.File{os.NewFile(uintptr(ends[0][1]), "child stdin"), os.NewFile(uintptr(ends[1][1]), "child stdout")}, nil
}
