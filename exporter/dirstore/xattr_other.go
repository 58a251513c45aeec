//go:build !linux && !darwin

package dirstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

var errNoXattr = errors.New("extended attributes are not supported on this platform")

func setXattr(*os.File, []byte) error   { return errNoXattr }
func getXattr(*os.File) ([]byte, error) { return nil, nil }
func unsupported(err error) bool        { return errors.Is(err, errNoXattr) }
func etag(fi fs.FileInfo) string        { return fmt.Sprintf(`"%x-%x"`, fi.ModTime().UnixNano(), fi.Size()) }
