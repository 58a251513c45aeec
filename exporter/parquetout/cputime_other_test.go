//go:build !unix

package parquetout

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
