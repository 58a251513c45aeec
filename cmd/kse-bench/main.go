// Command kse-bench is the driver of `make bench`; the logic lives in
// internal/bench.
package main

import (
	"os"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/bench"
)

func main() { os.Exit(bench.Main(os.Args[1:], os.Stdout, os.Stderr)) }
