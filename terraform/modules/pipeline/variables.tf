variable "name_prefix" {
  description = "Prefix of the names of the IAM role, crawler and Athena results bucket that this module creates."
  type        = string
  default     = "kubecost-s3-exporter"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{0,31}$", var.name_prefix))
    error_message = "name_prefix must be 1-32 lowercase letters, digits and hyphens, starting with a letter or digit."
  }
}

variable "bucket_name" {
  description = "Bucket the exporters write to (S3_BUCKET_NAME). Created when create_bucket is true, else it must exist."
  type        = string

  validation {
    condition = alltrue([
      can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name)),
      !can(regex("\\.\\.", var.bucket_name)),
      !can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+$", var.bucket_name)),
      !can(regex("^(xn--|sthree-|amzn-s3-demo-)", var.bucket_name)),
      !can(regex("(-s3alias|--ol-s3|\\.mrap|--x-s3|--table-s3)$", var.bucket_name)),
    ])
    error_message = "bucket_name must be a valid general-purpose S3 bucket name: 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit, not an IP address, without a reserved prefix or suffix."
  }
}

variable "s3_prefix" {
  description = "Key prefix before account_id= (S3_PREFIX), empty or ending with /. Wildcard characters (* ? $) are rejected because they would widen IAM resource patterns."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([A-Za-z0-9!_.'()=-]+/)*$", var.s3_prefix))
    error_message = "s3_prefix must be empty or path segments of A-Z a-z 0-9 ! _ . ' ( ) = - each ending with / (for example team-a/costs/)."
  }
}

variable "create_bucket" {
  description = "Create the bucket, with public access blocked, default encryption, bucket-owner-enforced ownership and the bucket policy of bucket_policy_json."
  type        = bool
  default     = false
}

variable "bucket_force_destroy" {
  description = "When create_bucket is true, let terraform destroy delete a non-empty bucket."
  type        = bool
  default     = false
}

variable "bucket_kms_key_arn" {
  description = "KMS key that encrypts the bucket (SSE-KMS). Used as the default encryption of a created bucket, and granted to the crawler for reading. Null means SSE-S3."
  type        = string
  default     = null

  validation {
    condition     = var.bucket_kms_key_arn == null || can(regex("^arn:[a-z-]+:kms:[a-z0-9-]+:[0-9]{12}:key/.+$", var.bucket_kms_key_arn))
    error_message = "bucket_kms_key_arn must be a KMS key ARN, arn:<partition>:kms:<region>:<account>:key/<id>."
  }
}

variable "attach_bucket_policy" {
  description = "Attach bucket_policy_json to an existing bucket (create_bucket = false). It replaces any policy the bucket already has, so merge by hand instead when it has one."
  type        = bool
  default     = false
}

variable "exporter_principal_arns" {
  description = "IAM roles that write exporter files: the writer_role_arn output of each exporter module (the parent role for a cross-account cluster). Only they may put objects under the data prefix, and they may read the Kubecost CA secret."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for a in var.exporter_principal_arns : can(regex("^arn:[a-z-]+:iam::[0-9]{12}:role/.+$", a))])
    error_message = "exporter_principal_arns must be IAM role ARNs, arn:<partition>:iam::<account>:role/<name>."
  }
}

variable "additional_writer_principal_arns" {
  description = "IAM principals besides the exporters that may still put objects under the data prefix (for example a break-glass admin role). ARN patterns with * are accepted."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for a in var.additional_writer_principal_arns : can(regex("^arn:[a-z-]+:(iam|sts)::[0-9]{12}:.+$", a))])
    error_message = "additional_writer_principal_arns must be IAM or STS principal ARNs."
  }
}

variable "database_name" {
  description = "Glue database name. The default is the one of the AWS Containers Cost Allocation (CCA) dashboard."
  type        = string
  default     = "kubecost_db"

  validation {
    condition     = can(regex("^[a-z0-9_]{1,255}$", var.database_name))
    error_message = "database_name must be 1-255 lowercase letters, digits and underscores (Athena lowercases names)."
  }
}

variable "table_name" {
  description = "Glue table name over the exporter's Parquet files."
  type        = string
  default     = "kubecost_table"

  validation {
    condition     = can(regex("^[a-z0-9_]{1,255}$", var.table_name))
    error_message = "table_name must be 1-255 lowercase letters, digits and underscores."
  }
}

variable "view_name" {
  description = "Athena view name. It selects every table column and hides data older than view_retention_months; the QuickSight dataset reads it."
  type        = string
  default     = "kubecost_view"

  validation {
    condition     = can(regex("^[a-z0-9_]{1,255}$", var.view_name))
    error_message = "view_name must be 1-255 lowercase letters, digits and underscores."
  }
}

variable "labels" {
  description = "Kubernetes label keys that the exporters export (their LABELS), in the same order. Each adds a string column properties.labels.<key>."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for k in var.labels : can(regex("^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", k))])
    error_message = "Each label must be a Kubernetes label key, [prefix/]name, such as app or app.kubernetes.io/name."
  }
  validation {
    condition     = length(distinct([for k in var.labels : lower(k)])) == length(var.labels)
    error_message = "labels must be distinct, ignoring case: Athena column names are case-insensitive."
  }
}

variable "annotations" {
  description = "Kubernetes annotation keys that the exporters export (their ANNOTATIONS), in the same order. Each adds a string column properties.annotations.<key>."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for k in var.annotations : can(regex("^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", k))])
    error_message = "Each annotation must be a Kubernetes annotation key, [prefix/]name."
  }
  validation {
    condition     = length(distinct([for k in var.annotations : lower(k)])) == length(var.annotations)
    error_message = "annotations must be distinct, ignoring case: Athena column names are case-insensitive."
  }
}

variable "view_retention_months" {
  description = "The view shows the current month and this many previous months; older partitions are hidden (and not scanned)."
  type        = number
  default     = 6

  validation {
    condition     = var.view_retention_months >= 0 && var.view_retention_months <= 120 && floor(var.view_retention_months) == var.view_retention_months
    error_message = "view_retention_months must be an integer from 0 to 120."
  }
}

variable "partition_projection" {
  description = "Athena partition projection. When enabled, Athena computes partitions from these account IDs and regions and the crawler is not needed (set create_crawler = false). start_year is the first year= partition."
  type = object({
    enabled     = optional(bool, false)
    account_ids = optional(list(string), [])
    regions     = optional(list(string), [])
    start_year  = optional(number, 2020)
  })
  default = {}

  validation {
    condition     = !var.partition_projection.enabled || (length(var.partition_projection.account_ids) > 0 && length(var.partition_projection.regions) > 0)
    error_message = "partition_projection needs at least one account ID and one region when enabled."
  }
  validation {
    condition     = alltrue([for a in var.partition_projection.account_ids : can(regex("^[0-9]{12}$", a))]) && alltrue([for r in var.partition_projection.regions : can(regex("^([a-z]{2}(-gov|-iso[bef]?)?-[a-z]+|eusc-[a-z]{2}-[a-z]+)-[0-9]{1,2}$", r))])
    error_message = "partition_projection.account_ids must be 12-digit account IDs and regions must be AWS region codes."
  }
  validation {
    condition     = var.partition_projection.start_year >= 2000 && var.partition_projection.start_year <= 2100 && floor(var.partition_projection.start_year) == var.partition_projection.start_year
    error_message = "partition_projection.start_year must be an integer year from 2000 to 2100."
  }
}

variable "create_crawler" {
  description = "Create the Glue crawler that adds the new account_id/region/year/month partitions to the table."
  type        = bool
  default     = true
}

variable "crawler_schedule" {
  description = "Crawler schedule (UTC), a Glue cron expression. Run it after the exporters (chart default 00:00 UTC) and before the QuickSight refresh."
  type        = string
  default     = "cron(0 2 * * ? *)"

  validation {
    condition     = can(regex("^cron\\(\\S+ \\S+ \\S+ \\S+ \\S+ \\S+\\)$", var.crawler_schedule))
    error_message = "crawler_schedule must be a six-field Glue cron expression such as cron(0 2 * * ? *)."
  }
}

variable "athena_workgroup_name" {
  description = "Athena workgroup name. The workgroup enforces its result location and encryption."
  type        = string
  default     = "kubecost-s3-exporter"

  validation {
    condition     = can(regex("^[a-zA-Z0-9._-]{1,128}$", var.athena_workgroup_name))
    error_message = "athena_workgroup_name must be 1-128 letters, digits, dots, underscores and hyphens."
  }
}

variable "athena_workgroup_force_destroy" {
  description = "Let terraform destroy delete the workgroup even when it holds saved queries."
  type        = bool
  default     = false
}

variable "athena_results_bucket_name" {
  description = "Existing bucket for Athena query results. Null creates a private bucket (named <name_prefix>-athena-results-<suffix>) whose results expire."
  type        = string
  default     = null

  validation {
    condition     = var.athena_results_bucket_name == null || can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.athena_results_bucket_name))
    error_message = "athena_results_bucket_name must be a valid S3 bucket name."
  }
}

variable "athena_results_prefix" {
  description = "Key prefix of Athena query results in the results bucket, ending with /."
  type        = string
  default     = "athena-results/"

  validation {
    condition     = can(regex("^([A-Za-z0-9!_.'()=-]+/)+$", var.athena_results_prefix))
    error_message = "athena_results_prefix must be one or more path segments each ending with /."
  }
}

variable "athena_results_expiration_days" {
  description = "Days after which Athena results expire in a results bucket created by this module."
  type        = number
  default     = 30

  validation {
    condition     = var.athena_results_expiration_days >= 1 && floor(var.athena_results_expiration_days) == var.athena_results_expiration_days
    error_message = "athena_results_expiration_days must be a positive integer."
  }
}

variable "athena_encryption_option" {
  description = "Encryption of Athena query results, enforced by the workgroup: SSE_S3, SSE_KMS or CSE_KMS."
  type        = string
  default     = "SSE_S3"

  validation {
    condition     = contains(["SSE_S3", "SSE_KMS", "CSE_KMS"], var.athena_encryption_option)
    error_message = "athena_encryption_option must be SSE_S3, SSE_KMS or CSE_KMS."
  }
}

variable "athena_kms_key_arn" {
  description = "KMS key for athena_encryption_option SSE_KMS or CSE_KMS."
  type        = string
  default     = null

  validation {
    condition     = var.athena_kms_key_arn == null || can(regex("^arn:[a-z-]+:kms:[a-z0-9-]+:[0-9]{12}:key/.+$", var.athena_kms_key_arn))
    error_message = "athena_kms_key_arn must be a KMS key ARN."
  }
}

variable "athena_bytes_scanned_cutoff_per_query" {
  description = "Cancel workgroup queries that scan more bytes than this (at least 10485760). Null means no limit."
  type        = number
  default     = null

  validation {
    condition     = var.athena_bytes_scanned_cutoff_per_query == null || try(var.athena_bytes_scanned_cutoff_per_query >= 10485760, false)
    error_message = "athena_bytes_scanned_cutoff_per_query must be at least 10485760 (10 MB)."
  }
}

variable "create_kubecost_ca_secret" {
  description = "Create a Secrets Manager secret for the PEM CA bundle of Kubecost's TLS endpoint (KUBECOST_CA_CERTIFICATE_SECRET_NAME), readable by exporter_principal_arns."
  type        = bool
  default     = false
}

variable "kubecost_ca_secret_name" {
  description = "Name of the Kubecost CA secret."
  type        = string
  default     = "kubecost-s3-exporter/kubecost-ca"

  validation {
    condition     = can(regex("^[a-zA-Z0-9/_+=.@-]{1,512}$", var.kubecost_ca_secret_name))
    error_message = "kubecost_ca_secret_name must be 1-512 of a-z A-Z 0-9 / _ + = . @ -."
  }
}

variable "kubecost_ca_certificate_pem" {
  description = "PEM CA bundle stored as the secret's value. Null creates the secret empty, for you to put the value out of band (it then stays out of the Terraform state)."
  type        = string
  default     = null

  validation {
    condition     = var.kubecost_ca_certificate_pem == null || can(regex("-----BEGIN CERTIFICATE-----", var.kubecost_ca_certificate_pem))
    error_message = "kubecost_ca_certificate_pem must hold at least one PEM certificate."
  }
}

variable "kubecost_ca_secret_kms_key_id" {
  description = "KMS key that encrypts the Kubecost CA secret. Null means the AWS managed key. Give the exporters kms:Decrypt on it (exporter module kms_key_arns)."
  type        = string
  default     = null
}

variable "kubecost_ca_secret_recovery_window_in_days" {
  description = "Days a deleted Kubecost CA secret can be restored: 0 (delete at once) or 7-30."
  type        = number
  default     = 7

  validation {
    condition     = var.kubecost_ca_secret_recovery_window_in_days == 0 || (var.kubecost_ca_secret_recovery_window_in_days >= 7 && var.kubecost_ca_secret_recovery_window_in_days <= 30)
    error_message = "kubecost_ca_secret_recovery_window_in_days must be 0 or 7-30."
  }
}

variable "tags" {
  description = "Tags added to every taggable resource."
  type        = map(string)
  default     = {}
}
