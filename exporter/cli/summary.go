package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// summaryCmd prints, for the Parquet files under the given paths, the
// files, their rows and the total cost per namespace. It lets an operator
// (and `make demo`) see what an OUTPUT_DIR export holds without Athena.
func summaryCmd(args []string, stdout, stderr io.Writer) int {
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
		n, cost, err := sumFile(f, byNS)
		if err != nil {
			fmt.Fprintf(stderr, "summary: %s: %v\n", f, err)
			return ExitRuntime
		}
		rows += n
		total += cost
		fmt.Fprintf(stdout, "%-100s %10d %12.2f\n", f, n, cost)
	}
	type nsCost struct {
		ns   string
		cost float64
	}
	var list []nsCost
	for ns, c := range byNS {
		list = append(list, nsCost{ns, c})
	}
	slices.SortFunc(list, func(a, b nsCost) int { return cmp.Or(cmp.Compare(b.cost, a.cost), cmp.Compare(a.ns, b.ns)) })
	fmt.Fprintf(stdout, "\ncost per namespace over %d files, %d rows:\n", len(files), rows)
	for _, e := range list {
		name := e.ns
		if name == "" {
			name = "(none: idle or unallocated)"
		}
		fmt.Fprintf(stdout, "  %-40s %12.2f  %5.1f%%\n", name, e.cost, 100*e.cost/total)
	}
	fmt.Fprintf(stdout, "  %-40s %12.2f\n", "TOTAL", total)
	return ExitOK
}

// sumFile adds a file's totalCost per properties.namespace into byNS.
func sumFile(path string, byNS map[string]float64) (rows int64, total float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, 0, err
	}
	ns, ok1 := pf.Schema().Lookup("properties.namespace")
	cost, ok2 := pf.Schema().Lookup("totalCost")
	if !ok1 || !ok2 {
		return 0, 0, errors.New("not an exporter file: no properties.namespace or totalCost column")
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 256)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			var nsv string
			var c float64
			for _, v := range row {
				switch v.Column() {
				case ns.ColumnIndex:
					nsv = v.String()
				case cost.ColumnIndex:
					c = v.Double()
				}
			}
			byNS[nsv] += c
			total += c
			rows++
		}
		if errors.Is(err, io.EOF) {
			return rows, total, nil
		}
		if err != nil {
			return rows, total, err
		}
	}
}
