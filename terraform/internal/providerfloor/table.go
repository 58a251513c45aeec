package providerfloor

// validatedAWS and validatedHelm name where a Validated entry's version
// comes from.
const (
	validatedAWS  = "the aws bound every module stated before this table, >= 5.40.0 (its tested range: 5.40 and later 5.x, and 6.x)"
	validatedHelm = "the helm bound modules/exporter stated before this table, >= 2.9.0"
)

// Table holds every resource and data source the modules use, and each
// argument newer than its resource. Add a row when a module starts using
// a new one: TestProviderFloors fails on a resource or data source that
// is not here. An entry whose first version is read from the provider's
// CHANGELOG says so (Changelog); the others keep the version the modules
// were validated with until someone narrows them (Validated).
var Table = []Entry{
	{"aws", "resource", "aws_bcmdataexports_export", "", "5.47.0", Changelog,
		"hashicorp/terraform-provider-aws CHANGELOG.md, 5.47.0 (April 26, 2024), FEATURES: New Resource aws_bcmdataexports_export; " +
			"validating bill-export against v5.45.0 fails with Invalid resource type (issue 49)"},
	{"aws", "resource", "aws_athena_workgroup", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_cloudformation_stack", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_glue_catalog_database", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_glue_catalog_table", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_glue_crawler", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_iam_role", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_iam_role_policy", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_quicksight_data_set", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_quicksight_data_source", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_quicksight_refresh_schedule", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_s3_bucket", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_s3_bucket_lifecycle_configuration", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_s3_bucket_ownership_controls", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_s3_bucket_policy", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_s3_bucket_public_access_block", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_s3_bucket_server_side_encryption_configuration", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_secretsmanager_secret", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_secretsmanager_secret_policy", "", "5.40.0", Validated, validatedAWS},
	{"aws", "resource", "aws_secretsmanager_secret_version", "", "5.40.0", Validated, validatedAWS},
	{"aws", "data", "aws_caller_identity", "", "5.40.0", Validated, validatedAWS},
	{"aws", "data", "aws_iam_policy_document", "", "5.40.0", Validated, validatedAWS},
	{"aws", "data", "aws_partition", "", "5.40.0", Validated, validatedAWS},
	{"aws", "data", "aws_region", "", "5.40.0", Validated, validatedAWS},
	{"helm", "resource", "helm_release", "", "2.9.0", Validated, validatedHelm},
}
