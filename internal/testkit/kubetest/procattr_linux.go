package kubetest

import (
	"os/exec"
	"syscall"
)

// setProcAttrs makes the kernel kill the server if the test binary dies (for
// example on a go test -timeout panic), so no orphan keeps ports or disk.
func setProcAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
