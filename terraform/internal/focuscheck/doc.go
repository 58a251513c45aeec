// Package focuscheck holds FOCUS 1.3's requirements, as SQL checks on
// DuckDB named by their rule ids, and the DuckDB set-up of the bill-focus
// module's views (issue 47): it renders them exactly as Terraform does
// (terraform/internal/tfeval) over the split's row view
// <prefix>_split_daily and an AWS FOCUS 1.2 export written by
// internal/testkit/curfixture.
//
// The rules are restated from the FOCUS requirements model
// (FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec,
// specification/requirements_model/model_rules/, the 1.3 rules as of the
// commits each Check cites); no text of the model is copied here. It also
// restates, in Go, the Cloud Intelligence Dashboards' rule for which Glue
// tables its FOCUS consolidation unions (Consolidated), so that a test can
// apply it to every table the Terraform modules create.
//
// Like billcheck, it is a package of its own so that only the test
// binaries that use it link DuckDB; the caller registers the driver.
package focuscheck
