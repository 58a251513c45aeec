package providerfloor

// Where the versions come from. The AWS provider's CHANGELOG.md is split
// by major: release/2.x holds 0.1.0 to 2.70.x (the provider's first
// release, 0.1.0, is where the resources split from Terraform core came
// in: its FEATURES list only what was new then, so an older resource is
// cited by its presence in v0.1.0's aws/provider.go), release/3.x 3.0.0 to
// 3.76.1, release/4.x 4.0.0 to 4.67.0, and main 5.x and on. An argument
// that a resource had from its first release is not listed; each one the
// modules use was read in the provider source at that release.
const (
	awsCL2 = "hashicorp/terraform-provider-aws CHANGELOG.md (release/2.x), "
	awsCL3 = "hashicorp/terraform-provider-aws CHANGELOG.md (release/3.x), "
	awsCL4 = "hashicorp/terraform-provider-aws CHANGELOG.md (release/4.x), "
	awsCL5 = "hashicorp/terraform-provider-aws CHANGELOG.md, "
	awsV01 = "present in hashicorp/terraform-provider-aws v0.1.0 (June 20, 2017), the first release and the oldest " +
		"section of CHANGELOG.md (release/2.x): it came with the provider's split from Terraform core, so no " +
		"FEATURES line names it; aws/provider.go at v0.1.0 registers it"
	helmCL = "hashicorp/terraform-provider-helm CHANGELOG.md, "
)

// Table holds every resource and data source the modules and examples
// use, each argument or attribute newer than its resource, each
// provider's oldest release that Terraform (>= 1.3, the modules'
// required_version) can run, and each provider configuration attribute
// that is newer than that. Add a row when a module starts using a new one:
// TestProviderFloors fails on a resource or data source that is not here.
var Table = []Entry{
	// Terraform 0.12 and later speak plugin protocol 5 only.
	{"aws", "provider", "aws", "", "2.7.0",
		awsCL2 + "2.7.0 (April 18, 2019), NOTES: provider: This release includes only a Terraform SDK upgrade with compatibility for Terraform v0.12"},
	{"helm", "provider", "helm", "", "0.9.1",
		helmCL + "0.9.1 (April 24, 2019): Migrate to Terraform 0.12 SDK"},
	// The examples' provider "helm" sets kubernetes = { ... }, an attribute.
	{"helm", "provider", "helm", "kubernetes", "3.0.0",
		helmCL + "3.0.0 (Jun 18, 2025), BREAKING CHANGES: Blocks to Nested Objects: Blocks like `kubernetes`, `registry`, and `experiments` are now represented as nested objects"},

	{"aws", "data", "aws_caller_identity", "", "0.1.0", awsV01},
	{"aws", "data", "aws_eks_cluster", "", "1.22.0",
		awsCL2 + "1.22.0 (June 05, 2018), FEATURES: New Data Source: aws_eks_cluster"},
	{"aws", "data", "aws_eks_cluster", "identity", "2.28.0",
		awsCL2 + "2.28.0 (September 12, 2019), ENHANCEMENTS: data-source/aws_eks_cluster: Add `identity` attribute (support getting OIDC issuer URL)"},
	{"aws", "data", "aws_iam_openid_connect_provider", "", "4.2.0",
		awsCL4 + "4.2.0 (February 18, 2022), FEATURES: New Data Source: aws_iam_openid_connect_provider"},
	{"aws", "data", "aws_iam_policy_document", "", "0.1.0", awsV01},
	{"aws", "data", "aws_iam_policy_document", "source_policy_documents", "3.28.0",
		awsCL3 + "3.28.0 (February 12, 2021), ENHANCEMENTS: data-source/aws_iam_policy_document: Support merging policy documents by adding `source_policy_documents` and `override_policy_documents` arguments"},
	{"aws", "data", "aws_partition", "", "0.1.0", awsV01},
	{"aws", "data", "aws_region", "", "0.1.0", awsV01},

	{"aws", "resource", "aws_athena_workgroup", "", "2.19.0",
		awsCL2 + "2.19.0 (July 11, 2019), FEATURES: New Resource: aws_athena_workgroup"},
	{"aws", "resource", "aws_athena_workgroup", "force_destroy", "2.55.0",
		awsCL2 + "2.55.0 (March 27, 2020), ENHANCEMENTS: resource/aws_athena_workgroup: Add `force_destroy` argument"},
	{"aws", "resource", "aws_athena_workgroup", "configuration.engine_version", "3.67.0",
		awsCL3 + "3.67.0 (November 25, 2021), ENHANCEMENTS: resource/aws_athena_workgroup: Add `engine_version` argument"},
	{"aws", "resource", "aws_athena_workgroup", "configuration.result_configuration.expected_bucket_owner", "4.7.0",
		awsCL4 + "4.7.0 (March 24, 2022), ENHANCEMENTS: resource/aws_athena_workgroup: Add `acl_configuration` and `expected_bucket_owner` arguments to the `configuration.result_configuration` block"},

	{"aws", "resource", "aws_bcmdataexports_export", "", "5.47.0",
		awsCL5 + "5.47.0 (April 26, 2024), FEATURES: New Resource aws_bcmdataexports_export; " +
			"validating bill-export against v5.45.0 fails with Invalid resource type (issue 49)"},

	{"aws", "resource", "aws_cloudformation_stack", "", "0.1.0", awsV01},

	{"aws", "resource", "aws_glue_catalog_database", "", "1.7.0",
		awsCL2 + "1.7.0 (January 12, 2018), FEATURES: New Resource: aws_glue_catalog_database"},
	{"aws", "resource", "aws_glue_catalog_database", "arn", "2.68.0",
		awsCL2 + "2.68.0 (June 25, 2020), ENHANCEMENTS: resource/aws_glue_catalog_database: Add `arn` attribute"},
	{"aws", "resource", "aws_glue_catalog_database", "tags", "4.66.0",
		awsCL4 + "4.66.0 (May 4, 2023), ENHANCEMENTS: resource/aws_glue_catalog_database: Add tagging support"},
	{"aws", "resource", "aws_glue_catalog_table", "", "1.18.0",
		awsCL2 + "1.18.0 (May 10, 2018), FEATURES: New Resource: aws_glue_catalog_table"},
	{"aws", "resource", "aws_glue_catalog_table", "arn", "2.67.0",
		awsCL2 + "2.67.0 (June 19, 2020), ENHANCEMENTS: resource/aws_glue_catalog_table: Add `arn` attribute"},
	// The views set no partition_keys; Athena cannot query a view whose
	// PartitionKeys is unset rather than empty (issue #5206, which this
	// fix closes).
	{"aws", "resource", "aws_glue_catalog_table", "view_original_text", "3.23.0",
		awsCL3 + "3.23.0 (January 08, 2021), BUG FIXES: resource/aws_glue_catalog_table: Glue table partition keys should be set to empty list instead of being unset"},
	{"aws", "resource", "aws_glue_crawler", "", "1.24.0",
		awsCL2 + "1.24.0 (June 21, 2018), FEATURES: New Resource: aws_glue_crawler"},
	{"aws", "resource", "aws_glue_crawler", "catalog_target", "2.23.0",
		awsCL2 + "2.23.0 (August 07, 2019), ENHANCEMENTS: resource/aws_glue_crawler: Add `catalog_target` configuration block"},
	{"aws", "resource", "aws_glue_crawler", "tags", "2.37.0",
		awsCL2 + "2.37.0 (November 18, 2019), ENHANCEMENTS: resource/aws_glue_crawler: Add `tags` argument"},

	{"aws", "resource", "aws_iam_role", "", "0.1.0", awsV01},
	// The modules hand the role's arn to trust policies and to the chart.
	{"aws", "resource", "aws_iam_role", "arn", "3.70.0",
		awsCL3 + "3.70.0 (December 16, 2021), BUG FIXES: resource/aws_iam_role: Fix eventual consistency problem with `arn` sometimes being a unique ID instead of the role ARN; " +
			"after 3.69.0 (December 09, 2021): Prevent `arn` attribute from ever containing a unique ID immediately after role creation"},
	{"aws", "resource", "aws_iam_role", "assume_role_policy", "4.50.0",
		awsCL4 + "4.50.0 (January 13, 2023), BUG FIXES: resource/aws_iam_role: Fixed issue that could result in \"inconsistent final plan\" errors (#28868, as for aws_iam_role_policy below)"},
	{"aws", "resource", "aws_iam_role", "max_session_duration", "1.14.0",
		awsCL2 + "1.14.0 (April 06, 2018), ENHANCEMENTS: resource/aws_iam_role: Add `max_session_duration` argument"},
	{"aws", "resource", "aws_iam_role", "permissions_boundary", "1.30.0",
		awsCL2 + "1.30.0 (August 02, 2018), ENHANCEMENTS: resource/aws_iam_role: Add `permissions_boundary` argument"},
	{"aws", "resource", "aws_iam_role", "tags", "1.46.0",
		awsCL2 + "1.46.0 (November 20, 2018), ENHANCEMENTS: resource/aws_iam_role: Add `tags` argument"},
	{"aws", "resource", "aws_iam_role_policy", "", "0.1.0", awsV01},
	// The modules' policies name resources created in the same apply, so
	// the policy is unknown at plan time: the case #28868 fixed (its test
	// is TestAccIAMRolePolicy_unknownsInPolicy).
	{"aws", "resource", "aws_iam_role_policy", "policy", "4.50.0",
		awsCL4 + "4.50.0 (January 13, 2023), BUG FIXES: resource/aws_iam_role_policy: Fixed issue that could result in \"inconsistent final plan\" errors"},

	{"aws", "resource", "aws_quicksight_data_set", "", "4.62.0",
		awsCL4 + "4.62.0 (April 6, 2023), FEATURES: New Resource: aws_quicksight_data_set"},
	// 4.62.0 has both arguments but does not send them to the API.
	{"aws", "resource", "aws_quicksight_data_set", "physical_table_map.relational_table.catalog", "4.63.0",
		awsCL4 + "4.63.0 (April 14, 2023), BUG FIXES: resource/aws_quicksight_data_set: Fix to properly send `physical_table_map.*.relational_table.catalog` when set"},
	{"aws", "resource", "aws_quicksight_data_set", "physical_table_map.relational_table.schema", "4.63.0",
		awsCL4 + "4.63.0 (April 14, 2023), BUG FIXES: resource/aws_quicksight_data_set: Fix to properly send `physical_table_map.*.relational_table.schema` when set"},
	{"aws", "resource", "aws_quicksight_data_source", "", "3.61.0",
		awsCL3 + "3.61.0 (October 01, 2021), FEATURES: New Resource: aws_quicksight_data_source"},
	// Before it, an update (say, of the name) sent no parameters, so
	// QuickSight failed it or ran the data source in the primary
	// workgroup, not the module's (issues #31334, #32981).
	{"aws", "resource", "aws_quicksight_data_source", "parameters.athena.work_group", "5.26.0",
		awsCL5 + "5.26.0 (November 16, 2023), BUG FIXES: resource/aws_quicksight_data_source: Set all parameters to update aws_quicksight_data_source"},
	{"aws", "resource", "aws_quicksight_refresh_schedule", "", "4.65.0",
		awsCL4 + "4.65.0 (April 27, 2023), FEATURES: New Resource: aws_quicksight_refresh_schedule"},

	{"aws", "resource", "aws_s3_bucket", "", "0.1.0", awsV01},
	// 3.75.0 backported the standalone S3 bucket configuration resources
	// (4.0.0 lists the same ones); 3.75.0 is the lower version.
	{"aws", "resource", "aws_s3_bucket_lifecycle_configuration", "", "3.75.0",
		awsCL3 + "3.75.0 (March 18, 2022), FEATURES: New Resource: aws_s3_bucket_lifecycle_configuration (also in release/4.x 4.0.0, February 10, 2022)"},
	// The modules' filter has a prefix or, by default, none: an empty
	// block. 4.2.0 and 4.6.0 fixed plans and requests for that, 4.9.0
	// the requests that change it; 3.x's last release, 3.76.1, lists
	// only the 4.6.0 fix (in 3.75.0), so the first version with all three
	// is 4.9.0.
	{"aws", "resource", "aws_s3_bucket_lifecycle_configuration", "rule.filter", "4.9.0",
		awsCL4 + "4.9.0 (April 07, 2022), BUG FIXES: resource/aws_s3_bucket_lifecycle_configuration: Prevent `MalformedXML` errors when handling diffs in `rule.filter`; " +
			"also 4.2.0 (February 18, 2022): Prevent non-empty plans when `filter` is an empty configuration block, and 4.6.0 (March 18, 2022): Support empty string filtering"},
	{"aws", "resource", "aws_s3_bucket_ownership_controls", "", "3.10.0",
		awsCL3 + "3.10.0 (October 09, 2020), FEATURES: New Resource: aws_s3_bucket_ownership_controls"},
	{"aws", "resource", "aws_s3_bucket_policy", "", "0.1.0", awsV01},
	{"aws", "resource", "aws_s3_bucket_public_access_block", "", "1.54.0",
		awsCL2 + "1.54.0 (December 21, 2018), FEATURES: New Resource: aws_s3_bucket_public_access_block"},
	// Alongside it, a 3.x aws_s3_bucket would remove the bucket's default
	// encryption (S3's since January 2023) until 3.76.1 made its own
	// server_side_encryption_configuration Computed; 4.x has it read-only.
	{"aws", "resource", "aws_s3_bucket_server_side_encryption_configuration", "", "3.76.1",
		awsCL3 + "3.75.0 (March 18, 2022), FEATURES: New Resource: aws_s3_bucket_server_side_encryption_configuration; " +
			"3.76.1 (January 05, 2023), ENHANCEMENTS: resource/aws_s3_bucket: Mark `server_side_encryption_configuration` as Computed in support of S3 object encryption by default"},

	{"aws", "resource", "aws_secretsmanager_secret", "", "1.16.0",
		awsCL2 + "1.16.0 (April 25, 2018), FEATURES: New Resource: aws_secretsmanager_secret"},
	{"aws", "resource", "aws_secretsmanager_secret_policy", "", "3.14.0",
		awsCL3 + "3.14.0 (November 06, 2020), FEATURES: New Resource: aws_secretsmanager_secret_policy"},
	{"aws", "resource", "aws_secretsmanager_secret_version", "", "1.16.0",
		awsCL2 + "1.16.0 (April 25, 2018), FEATURES: New Resource: aws_secretsmanager_secret_version"},

	// helm_release is in the first release; none of the arguments used
	// changed from block to attribute in 3.0.0 (set, set_list did).
	{"helm", "resource", "helm_release", "", "0.6.1",
		helmCL + "0.6.1 (October 25, 2018): Re-release after induction into 'terraform-providers' (the section before it, 0.1.0, is the Initial Release by Hashicorp); " +
			"helm/provider.go registers helm_release from tag v0.4.0 (January 22, 2018) and at v0.6.1"},
	{"helm", "resource", "helm_release", "create_namespace", "1.2.0",
		helmCL + "1.2.0 (May 06, 2020), IMPROVEMENTS: Upgrade to Helm 3.2.0 (the commit, #477, that adds `create_namespace`; first tag v1.2.0)"},
	// The module's default chart repository is an oci:// one.
	{"helm", "resource", "helm_release", "repository", "2.5.0",
		helmCL + "2.5.0 (March 28, 2022): Add support for OCI registries"},
}
