package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
)

func run(ctx context.Context, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	cfg, err := config.Load(lookup)
	if err != nil {
		fmt.Fprintf(stderr, "configuration error: %v\n", err)
		return ExitConfig
	}
	_ = cfg
	fmt.Fprintln(stderr, "run: not implemented yet")
	return ExitRuntime
}
