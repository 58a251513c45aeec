// Command kubecost-s3-exporter exports Kubecost allocation data to Parquet
// files in S3. See the README; all logic lives in exporter/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
)

func main() {
	// The GC setting is the process's, so only main chooses it; an explicit GOGC wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(cli.GCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
