variable "name" {
  description = "Table name."
  type        = string
}

variable "database_name" {
  description = "Glue database of the table."
  type        = string
}

variable "description" {
  description = "Table description."
  type        = string
}

variable "location" {
  description = "S3 location of the Parquet files, s3://bucket/prefix/."
  type        = string
}

variable "columns" {
  description = "Columns, in the files' order, with their Glue (Hive) types."
  type = list(object({
    name = string
    type = string
  }))
}

variable "partition_keys" {
  description = "Hive partition keys, outermost first, with their Glue types."
  type = list(object({
    name = string
    type = string
  }))
  default = []
}

variable "parameters" {
  description = "Table parameters added to EXTERNAL and classification = parquet, e.g. partition projection."
  type        = map(string)
  default     = {}
}
