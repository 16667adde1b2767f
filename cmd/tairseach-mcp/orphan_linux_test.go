package main

import (
	"os/exec"
	"syscall"
)

// dieWithTheTest makes the kernel kill cmd's process when the test binary
// ends, however it ends (a panic, a timeout, a signal): a bridge serving
// HTTP has no stdin whose end would stop it.
func dieWithTheTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
