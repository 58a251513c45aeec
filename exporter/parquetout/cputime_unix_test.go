//go:build unix

package parquetout

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report it
// because wall time is meaningless on a shared, loaded machine.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
