//go:build !unix

package cur_test

func cpuTime() int64 { return 0 }
