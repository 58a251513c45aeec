// Package duckcheck holds the tests that query the exporter's Parquet
// output with DuckDB (github.com/duckdb/duckdb-go), a SQL engine that reads
// Parquet maps, lists and structs the way Athena does. DuckDB is linked
// with cgo from a static library, which takes a while to build, so every
// DuckDB query of the project lives in this one package and the library is
// compiled once.
package duckcheck
