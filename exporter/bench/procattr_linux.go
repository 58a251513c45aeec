package bench

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill the child when the bench dies, so
// an interrupted bench leaves no MinIO holding ports and disk.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
