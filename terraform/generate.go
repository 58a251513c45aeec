// Package terraform holds the Terraform modules and examples that
// provision everything behind kubecost-s3-exporter, and the Go tests that
// check them against the exporter's own contract (package schema and the
// key layout) without Terraform providers or AWS.
//
// Generated files (columns.json, the cid-cmd resources under quicksight/cid
// and the input/output tables of the READMEs) are rewritten with:
//
//	go generate ./terraform/...
package terraform

//go:generate go test . -count=1 -run ^TestGenerated -args -update
