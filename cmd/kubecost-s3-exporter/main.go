// Command kubecost-s3-exporter exports Kubecost allocation data to Parquet
// files in S3. See the README; all logic lives in exporter/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
