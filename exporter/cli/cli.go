// Package cli is the exporter's command line (cmd/ only calls Main): the subcommands, the
// exit codes (CONTRACT §5) and the redacting logger. Every subcommand reads its settings
// through config's tables, so a bad value is one line and exit 2 wherever it is given. For
// run it wires the parts from a validated config (run.go: one app.Cluster per member, a
// single cluster being a fleet of one) and reports the outcome (outcome.go: one Pushgateway
// group per cluster, then the summary line, always last). cfg.Federated() is asked only
// where the user sees a difference: what Kubecost is asked and what is logged.
package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// GCPercent is the GOGC main applies unless GOGC is set. A day's live heap is small and the
// pipeline allocates little, so frequent GC is cheap, while Go's default of 100 lets the heap
// double: that headroom was most of the peak RSS. A soft memory limit would have to grow with
// CONCURRENCY and makes the GC spin when too low. Measurements: docs/performance.md (GOGC).
const GCPercent = 25

// Exit statuses of CONTRACT §5.
const (
	ExitOK      = 0
	ExitRuntime = 1
	ExitConfig  = 2
)

// Main runs the command with args (without the program name) and returns the exit status.
func Main(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			usage(stdout)
			return ExitOK
		case "version", "--version":
			fmt.Fprintf(stdout, "kubecost-s3-exporter %s (schema %s)\n", exporter.Version, schema.Version)
			return ExitOK
		case "schema":
			return schemaCmd(args[1:], lookup, stdout, stderr)
		case "summary":
			return summaryCmd(ctx, args[1:], stdout, stderr)
		case "report":
			return reportCmd(ctx, args[1:], lookup, stdout, stderr)
		case "run":
			args = args[1:]
			if len(args) > 0 && (args[0] == "--all-available" || args[0] == "-all-available") {
				args, lookup = args[1:], allAvailable(lookup)
			}
		default:
			fmt.Fprintf(stderr, "unknown command %q; see --help\n", args[0])
			return ExitConfig
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "run takes no arguments (configuration is read from the environment); got %q\n", args)
		return ExitConfig
	}
	return RunWith(ctx, lookup, stderr, Hooks{})
}

// allAvailable is lookup with BACKFILL_ALL_AVAILABLE=true, for `run --all-available`: the
// flag and the variable are one setting, read and validated on one path.
func allAvailable(lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if name == "BACKFILL_ALL_AVAILABLE" {
			return "true", true
		}
		return lookup(name)
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `kubecost-s3-exporter exports Kubecost allocation data to Parquet in S3.

Usage:
  kubecost-s3-exporter [run]         export the missing days (the default)
  kubecost-s3-exporter run --all-available
                                     also export every settled day Kubecost still holds
                                     (BACKFILL_ALL_AVAILABLE=true)
  kubecost-s3-exporter schema [--format json|text] [--labels k1,k2] [--annotations k1]
                                     print the Parquet column contract
  kubecost-s3-exporter summary DIR   print rows and cost per namespace of the Parquet files under DIR
  kubecost-s3-exporter report [-dir DIR | -bucket NAME | -object-store-config-file FILE] [-from YYYY-MM-DD] [-to YYYY-MM-DD] [-cluster a,b] [-bill s3://BUCKET/PREFIX/ | DIR] [-o report.html]
                                     write a self-contained HTML report of the archive (read-only); with
                                     the run's environment it needs no flag (every flag: report -h)
  kubecost-s3-exporter version       print the version

Exit status: 0 success (also "nothing to do"), 1 runtime failure, 2 configuration error.

`)
	config.Usage(w)
}

func schemaCmd(args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	sc, err := config.LoadSchema(args, lookup, stderr)
	if err != nil {
		return configError(stderr, "schema", err)
	}
	d := schema.Describe(config.SplitList(sc.Labels), config.SplitList(sc.Annotations))
	if err := d.Write(stdout, sc.Format); err != nil {
		fmt.Fprintln(stderr, err)
		return ExitRuntime
	}
	return ExitOK
}
