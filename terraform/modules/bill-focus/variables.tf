variable "database_name" {
  description = "Glue database of the split's view (the bill module's database_name): the FOCUS views are created there."
  type        = string
}

variable "view_name_prefix" {
  description = "Prefix of the view names, the bill module's: <prefix>_focus and <prefix>_focus_replaced, reading <prefix>_split_daily."
  type        = string
  default     = "kubecost_bill"

  validation {
    condition     = can(regex("^[a-z][a-z0-9_]{0,63}$", var.view_name_prefix))
    error_message = "view_name_prefix must be lowercase letters, digits and underscores, starting with a letter (Athena lowercases names)."
  }
}

variable "split_view_name" {
  description = "The split's row view (Kubecost's split of the bill); null for <prefix>_split_daily."
  type        = string
  default     = null
}

variable "origin" {
  description = "Where the origin charges come from: focus_export (the AWS FOCUS 1.2 export table, focus_* variables) or cur (the CUR 2.0 table, cur_* variables, through the view <prefix>_focus_origin_cur)."
  type        = string
  default     = "focus_export"

  validation {
    condition     = contains(["focus_export", "cur"], var.origin)
    error_message = "origin must be focus_export or cur."
  }
}

variable "focus_database_name" {
  description = "Glue database of the organisation's AWS FOCUS 1.2 export table (the Cloud Intelligence Dashboards' data export database, for example). Required when origin is focus_export."
  type        = string
  default     = null
}

variable "focus_table_name" {
  description = "The AWS FOCUS 1.2 with AWS columns table (Data Export FOCUS_1_2_AWS, HOURLY or DAILY granularity: origin charges match the split by resource and UTC day). Required when origin is focus_export."
  type        = string
  default     = null
}

variable "focus_bucket_name" {
  description = "Bucket of the FOCUS export's files, for reader_policy_json. Required when origin is focus_export."
  type        = string
  default     = null
}

variable "focus_s3_prefix" {
  description = "Key prefix of the FOCUS export's files in focus_bucket_name, empty or ending with /; the reader may list and read only under it."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([A-Za-z0-9!_.'()=-]+/)*$", var.focus_s3_prefix))
    error_message = "focus_s3_prefix must be empty or path segments of A-Z a-z 0-9 ! _ . ' ( ) = - each ending with /."
  }
}

variable "focus_kms_key_arn" {
  description = "KMS key of the FOCUS bucket when it is SSE-KMS encrypted; null for SSE-S3."
  type        = string
  default     = null
}

variable "reader_role_names" {
  description = "IAM roles (names, in this account) that get reader_policy_json as an inline policy, e.g. QuickSight's service role. The split view's own sources need the bill module's reader policy too."
  type        = list(string)
  default     = []
}

variable "cur_database_name" {
  description = "Glue database of the CUR 2.0 table (the bill module's cur_database_name). Required when origin is cur."
  type        = string
  default     = null
}

variable "cur_table_name" {
  description = "The CUR 2.0 table (the bill module's cur_table_name). Required when origin is cur."
  type        = string
  default     = null
}

variable "cur_bucket_name" {
  description = "Bucket of the CUR 2.0 export's files, for reader_policy_json. Required when origin is cur."
  type        = string
  default     = null
}

variable "cur_s3_prefix" {
  description = "Key prefix of the CUR 2.0 export's files in cur_bucket_name, empty or ending with /; the reader may list and read only under it."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([A-Za-z0-9!_.'()=-]+/)*$", var.cur_s3_prefix))
    error_message = "cur_s3_prefix must be empty or path segments of A-Z a-z 0-9 ! _ . ' ( ) = - each ending with /."
  }
}

variable "cur_kms_key_arn" {
  description = "KMS key of the CUR bucket when it is SSE-KMS encrypted; null for SSE-S3."
  type        = string
  default     = null
}
