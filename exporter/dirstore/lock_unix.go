//go:build unix

package dirstore

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive flock(2) on dir, serialising replacing Puts across processes.
func lockDir(root *os.Root, dir string) (unlock func(), err error) {
	d, err := root.Open(filepath.FromSlash(dir))
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		d.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}, nil
}
