output "export_arn" {
  description = "ARN of the Data Export."
  value       = aws_bcmdataexports_export.this.arn
}

output "database_name" {
  description = "Glue database of the CUR 2.0 table (the bill module's cur_database_name)."
  value       = module.table.database_name
}

output "table_name" {
  description = "Glue table of the export (the bill module's cur_table_name)."
  value       = module.table.name
}

output "bucket_name" {
  description = "Bucket of the export (the bill module's cur_bucket_name)."
  value       = local.bucket_name
}

output "data_prefix" {
  description = "Key prefix of the export's files, <s3_prefix>/<export_name>/data/ (the bill module's cur_s3_prefix)."
  value       = local.data_prefix
}

output "query_statement" {
  description = "The export's query: the CUR 2.0 columns the bill views and the report read."
  value       = local.query
}

output "bucket_policy_json" {
  description = "The Data Exports bucket policy (billing services may write for this account's exports; TLS only). Attached when create_bucket or attach_bucket_policy."
  value       = module.bucket.policy_json
}
