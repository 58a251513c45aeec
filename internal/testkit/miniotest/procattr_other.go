//go:build !linux

package miniotest

import "os/exec"

// setProcAttrs is a no-op where Pdeathsig does not exist; t.Cleanup still
// stops the server on normal exits.
func setProcAttrs(*exec.Cmd) {}
