//go:build !unix

package dirstore

import (
	"errors"
	"os"
)

// lockDir is unsupported off Unix: a replacing Put fails rather than race.
func lockDir(*os.Root, string) (func(), error) {
	return nil, errors.New("replace-only writes need flock(2), which this platform lacks")
}
