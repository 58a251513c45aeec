package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
)

// summaryCmd prints the Parquet files under the paths, their rows and the cost per
// namespace, so that an operator (and `make demo`) sees an OUTPUT_DIR export without Athena.
func summaryCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: kubecost-s3-exporter summary DIR_OR_FILE...")
		return ExitConfig
	}
	var files []string
	for _, a := range args {
		err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			fmt.Fprintf(stderr, "summary: %v\n", err)
			return ExitRuntime
		}
	}
	slices.Sort(files)
	if len(files) == 0 {
		fmt.Fprintf(stdout, "no Parquet files under %s\n", strings.Join(args, " "))
		return ExitOK
	}

	byNS := map[string]float64{}
	var total float64
	var rows int64
	fmt.Fprintf(stdout, "%-100s %10s %12s\n", "file", "rows", "totalCost")
	for _, f := range files {
		n, cost, err := sumFile(ctx, f, byNS)
		if err != nil {
			fmt.Fprintf(stderr, "summary: %s: %v\n", f, err)
			return ExitRuntime
		}
		rows += n
		total += cost
		fmt.Fprintf(stdout, "%-100s %10d %12.2f\n", f, n, cost)
	}
	nss := slices.Collect(maps.Keys(byNS))
	slices.SortFunc(nss, func(a, b string) int { return cmp.Or(cmp.Compare(byNS[b], byNS[a]), cmp.Compare(a, b)) })
	fmt.Fprintf(stdout, "\ncost per namespace over %d files, %d rows:\n", len(files), rows)
	for _, ns := range nss {
		fmt.Fprintf(stdout, "  %-40s %12.2f  %5.1f%%\n", ns, byNS[ns], 100*byNS[ns]/total)
	}
	fmt.Fprintf(stdout, "  %-40s %12.2f\n", "TOTAL", total)
	return ExitOK
}

// sumFile adds a file's totalCost per namespace into byNS with the report's reader, so both
// commands name (Idle, __unallocated__) and sum namespaces alike.
func sumFile(ctx context.Context, path string, byNS map[string]float64) (rows int64, total float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	return report.NamespaceCosts(ctx, f, st.Size(), byNS)
}
