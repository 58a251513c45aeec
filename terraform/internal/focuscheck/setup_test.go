package focuscheck

import (
	"database/sql"
	"path/filepath"
	"runtime"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// moduleDir is terraform/modules/bill-focus, from this file's place.
func moduleDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "modules", "bill-focus")
}

// open creates the canonical scenario's views in a fresh DuckDB database
// of one connection.
func open(t *testing.T, split []SplitRow, export []curfixture.FocusRow) (*sql.DB, map[string]View) {
	t.Helper()
	dir := t.TempDir()
	if _, err := curfixture.WriteFocusExport(dir, curfixture.FocusExport, export); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	views, err := CreateViews(db, moduleDir(t), dir, split)
	if err != nil {
		t.Fatal(err)
	}
	return db, views
}
