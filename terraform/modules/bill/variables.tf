variable "database_name" {
  description = "Glue database of the archive (the pipeline module's database_name): the views are created there."
  type        = string
}

variable "kubecost_view_name" {
  description = "The archive's Athena view (the pipeline module's view_name): the Kubecost side."
  type        = string
  default     = "kubecost_view"
}

variable "cur_database_name" {
  description = "Glue database of the CUR 2.0 table: an existing one (Cloud Intelligence Dashboards users have one), or the bill-export module's database_name."
  type        = string
}

variable "cur_table_name" {
  description = "The CUR 2.0 table, from a Data Export with split cost allocation data (INCLUDE_SPLIT_COST_ALLOCATION_DATA), Parquet, partitioned by billing_period."
  type        = string
}

variable "view_name_prefix" {
  description = "Prefix of the view names: <prefix>_split_daily, <prefix>_namespace_daily, <prefix>_cluster_daily and <prefix>_cluster_monthly."
  type        = string
  default     = "kubecost_bill"

  validation {
    condition     = can(regex("^[a-z][a-z0-9_]{0,63}$", var.view_name_prefix))
    error_message = "view_name_prefix must be lowercase letters, digits and underscores, starting with a letter (Athena lowercases names)."
  }
}

variable "bill_retention_months" {
  description = "The bill side reads the billing periods of the current month and this many months before it, as the pipeline's view_retention_months does for the archive (pass module.pipeline.view_retention_months, or months only one side shows turn up as bill_only); null reads every period."
  type        = number
  default     = 6

  validation {
    condition     = var.bill_retention_months == null || try(var.bill_retention_months >= 0 && var.bill_retention_months <= 120 && floor(var.bill_retention_months) == var.bill_retention_months, false)
    error_message = "bill_retention_months must be null or an integer from 0 to 120."
  }
}

variable "cur_bucket_name" {
  description = "Bucket of the CUR 2.0 export's files, for reader_policy_json."
  type        = string
}

variable "cur_s3_prefix" {
  description = "Key prefix of the export's files in cur_bucket_name (for a Data Export <prefix>/<export-name>/data/), empty or ending with /; the reader may list and read only under it."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([A-Za-z0-9!_.'()=-]+/)*$", var.cur_s3_prefix))
    error_message = "cur_s3_prefix must be empty or path segments of A-Z a-z 0-9 ! _ . ' ( ) = - each ending with /."
  }
}

variable "cur_kms_key_arn" {
  description = "KMS key of the CUR bucket when it is SSE-KMS encrypted: the reader may decrypt with it. null for SSE-S3."
  type        = string
  default     = null
}

variable "athena_workgroup_name" {
  description = "Athena workgroup the reader queries in (the pipeline module's athena_workgroup_name); null leaves Athena out of reader_policy_json."
  type        = string
  default     = null
}

variable "athena_results_bucket_name" {
  description = "Bucket of that workgroup's query results (the pipeline module's athena_results_bucket_name); null leaves it out of reader_policy_json."
  type        = string
  default     = null
}

variable "reader_role_names" {
  description = "IAM roles (names, in this account) that get reader_policy_json as an inline policy, e.g. QuickSight's service role aws-quicksight-service-role-v0."
  type        = list(string)
  default     = []
}
