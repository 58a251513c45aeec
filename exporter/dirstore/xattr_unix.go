//go:build linux || darwin

package dirstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// setXattr stores value under metaXattr on the open file f.
func setXattr(f *os.File, value []byte) error {
	return fdDo(f, func(fd int) error { return unix.Fsetxattr(fd, metaXattr, value, 0) })
}

// getXattr reads metaXattr from f; nil, nil when the file or filesystem has none.
func getXattr(f *os.File) ([]byte, error) {
	var out []byte
	err := fdDo(f, func(fd int) error {
		buf := make([]byte, 4096)
		for {
			n, err := unix.Fgetxattr(fd, metaXattr, buf)
			switch {
			case errors.Is(err, unix.ERANGE) && len(buf) < 1<<20:
				buf = make([]byte, 4*len(buf))
				continue
			case errors.Is(err, errNoAttr) || unsupported(err):
				return nil
			case err != nil:
				return err
			}
			out = buf[:n]
			return nil
		}
	})
	return out, err
}

// unsupported reports whether err means the filesystem keeps no xattrs.
func unsupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}

func fdDo(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// etag names one version of a file: every Put renames a new inode into place, and size and
// mtime change with an edit in place.
func etag(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf(`"%x-%x-%x"`, st.Ino, fi.ModTime().UnixNano(), fi.Size())
	}
	return fmt.Sprintf(`"%x-%x"`, fi.ModTime().UnixNano(), fi.Size())
}
