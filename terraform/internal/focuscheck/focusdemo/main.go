// Command focusdemo is make demo's FOCUS step: Kubecost's split of the
// demo's bill as FOCUS 1.3 allocated charges on DuckDB (standing in for
// Athena), a few of its rows and the requirement checks' outcome
// (focuscheck.Demo). It needs cgo, for DuckDB.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/focuscheck"
)

func main() {
	archive := flag.String("archive", "demo-output", "the archive's directory (OUTPUT_DIR)")
	export := flag.String("bill", "demo-cur-export", "the CUR 2.0 Data Export's directory")
	tf := flag.String("terraform", "terraform", "the repository's terraform directory")
	flag.Parse()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	db.SetMaxOpenConns(1) // the session's UTC time zone lives on one connection
	failed, err := focuscheck.Demo(os.Stdout, db, *tf, *archive, *export)
	db.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if failed > 0 {
		os.Exit(1)
	}
}
