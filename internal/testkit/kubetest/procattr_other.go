//go:build !linux

package kubetest

import "os/exec"

// setProcAttrs is a no-op where Pdeathsig does not exist; t.Cleanup still
// stops the servers on normal exits.
func setProcAttrs(*exec.Cmd) {}
