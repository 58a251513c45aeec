//go:build !unix

package bill_test

func cpuTime() int64 { return 0 }
