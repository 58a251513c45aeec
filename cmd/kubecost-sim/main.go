// Command kubecost-sim serves a simulated Kubecost Allocation API, or renders
// one response to a file, for demos and benchmarks of the exporter. All
// logic lives in internal/testkit/kubecostsim; run it with -h for the flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kubecostsim.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
