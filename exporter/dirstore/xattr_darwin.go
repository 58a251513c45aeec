package dirstore

import "golang.org/x/sys/unix"

// errNoAttr is what macOS answers for an attribute the file does not have.
const errNoAttr = unix.ENOATTR
