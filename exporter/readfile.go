package exporter

import (
	"fmt"
	"io"
	"os"
)

// ReadFileMax reads a file the user names (headers file, CLUSTER_MAP_FILE,
// OBJECT_STORE_CONFIG_FILE) up to max bytes, a whole number of MiB, so a wrong path (a log,
// a device) is refused instead of read whole.
func ReadFileMax(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("larger than %d MiB", max>>20)
	}
	return b, err
}
