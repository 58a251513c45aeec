// Package terraform holds the Terraform modules and examples that
// provision everything behind kubecost-s3-exporter, and the Go tests that
// check them against the exporter's own contract (package schema and the
// key layout) without Terraform providers or AWS.
//
// Generated files (columns.json, the cid-cmd resources under quicksight/cid
// and the tables of the module and example READMEs) are rendered by
// internal/gen and written with `make generate`; the tests only check
// that they are current.
package terraform

//go:generate go run ./internal/generate
