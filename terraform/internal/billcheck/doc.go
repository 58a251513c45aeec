// Package billcheck holds the DuckDB tests of the bill module's views
// (issue 43): they render the views exactly as Terraform does
// (terraform/internal/tfeval) and run them, with DuckDB standing in for
// Athena, over a CUR 2.0 export written by internal/testkit/curfixture and
// an archive written by the exporter's own Parquet writer. Render and
// CreateViews are for any test under terraform/ that needs the views on
// DuckDB (the caller registers the driver). It is a package of its own so
// that only the test binaries that use it link DuckDB.
package billcheck
