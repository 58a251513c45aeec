variable "export_name" {
  description = "Name of the Data Export (also a folder of its files: <s3_prefix>/<export_name>/data/)."
  type        = string
  default     = "kubecost-s3-exporter-scad"

  validation {
    condition     = can(regex("^[0-9A-Za-z!_.*'()-]{1,128}$", var.export_name))
    error_message = "export_name must be 1-128 letters, digits and ! _ . * ' ( ) -."
  }
}

variable "bucket_name" {
  description = "Bucket the export writes to. Created when create_bucket is true, else it must exist in this account (Data Exports delivers to buckets the export's account owns)."
  type        = string
}

variable "create_bucket" {
  description = "Create the bucket, with public access blocked, SSE-S3, bucket-owner-enforced ownership and the Data Exports bucket policy."
  type        = bool
  default     = true
}

variable "attach_bucket_policy" {
  description = "Attach bucket_policy_json to an existing bucket (create_bucket = false). It replaces the bucket's policy."
  type        = bool
  default     = false
}

variable "s3_prefix" {
  description = "Key prefix of the export, without a trailing /."
  type        = string
  default     = "cur2"

  validation {
    condition     = can(regex("^[A-Za-z0-9!_.'()=-]+(/[A-Za-z0-9!_.'()=-]+)*$", var.s3_prefix))
    error_message = "s3_prefix must be path segments of A-Z a-z 0-9 ! _ . ' ( ) = - separated by /, without a leading or trailing /."
  }
}

variable "time_granularity" {
  description = "HOURLY or DAILY lines. The bill views sum UTC days either way; hourly lines give split cost allocation data per hour, as AWS recommends for it."
  type        = string
  default     = "HOURLY"

  validation {
    condition     = contains(["HOURLY", "DAILY"], var.time_granularity)
    error_message = "time_granularity must be HOURLY or DAILY."
  }
}

variable "database_name" {
  description = "Glue database of the export's table."
  type        = string
  default     = "kubecost_bill"
}

variable "create_database" {
  description = "Create database_name; false to put the table in an existing database."
  type        = bool
  default     = true
}

variable "table_name" {
  description = "Glue table over the export's Parquet files, partitioned by billing_period (projected)."
  type        = string
  default     = "cur2"
}

variable "first_billing_period" {
  description = "First billing period (YYYY-MM) of the partition projection's range."
  type        = string
  default     = "2025-01"

  validation {
    condition     = can(regex("^[0-9]{4}-(0[1-9]|1[0-2])$", var.first_billing_period))
    error_message = "first_billing_period must be YYYY-MM."
  }
}

variable "tags" {
  description = "Tags of the export, bucket and database."
  type        = map(string)
  default     = {}
}
