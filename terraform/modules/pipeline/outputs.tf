output "account_id" {
  description = "Account of the pipeline (bucket, Glue, Athena): the exporters' expected bucket owner."
  value       = local.account_id
}

output "region" {
  description = "Region of the Glue catalog, Athena workgroup and Kubecost CA secret."
  value       = local.region
}

output "bucket_name" {
  description = "Bucket the exporters write to (S3_BUCKET_NAME)."
  value       = module.data_bucket.id
}

output "bucket_arn" {
  description = "ARN of the data bucket."
  value       = local.bucket_arn
}

output "s3_prefix" {
  description = "Key prefix before account_id= (S3_PREFIX)."
  value       = var.s3_prefix
}

output "bucket_policy_json" {
  description = "Bucket policy for the data bucket: TLS only, and only the exporters may put objects under the data prefix. Attached when create_bucket or attach_bucket_policy is true."
  value       = module.data_bucket.policy_json
}

output "database_name" {
  description = "Glue database name."
  value       = aws_glue_catalog_database.this.name
}

output "table_name" {
  description = "Glue table name."
  value       = module.table.name
}

output "view_name" {
  description = "Athena view name (the QuickSight dataset's source)."
  value       = aws_glue_catalog_table.view.name
}

output "columns" {
  description = "Table columns in order: name (lowercase) and glue, presto and quicksight types. Partition keys excluded."
  value       = local.columns
}

output "partition_keys" {
  description = "Hive partition keys of the table, in order."
  value       = local.partition_keys
}

output "view_columns" {
  description = "Columns of the view (table columns, then partition keys) with their types; pass it to the quicksight module."
  value       = local.view_columns
}

output "view_retention_months" {
  description = "Months before the current one that the view shows (the bill module's bill_retention_months)."
  value       = var.view_retention_months
}

output "view_sql" {
  description = "SQL of the view."
  value       = local.view_sql
}

output "schema_version" {
  description = "Version of the exporter's column contract that the table follows."
  value       = local.schema.schema_version
}

output "crawler_name" {
  description = "Glue crawler name, or null when create_crawler is false."
  value       = var.create_crawler ? aws_glue_crawler.this[0].name : null
}

output "crawler_role_arn" {
  description = "IAM role of the crawler, or null when create_crawler is false."
  value       = var.create_crawler ? aws_iam_role.crawler[0].arn : null
}

output "athena_workgroup_name" {
  description = "Athena workgroup name."
  value       = aws_athena_workgroup.this.name
}

output "athena_workgroup_arn" {
  description = "Athena workgroup ARN."
  value       = aws_athena_workgroup.this.arn
}

output "athena_results_bucket_name" {
  description = "Bucket of Athena query results."
  value       = local.results_bucket
}

output "kubecost_ca_secret_arn" {
  description = "ARN of the Kubecost CA secret (for the exporter module's secret_arns), or null."
  value       = var.create_kubecost_ca_secret ? aws_secretsmanager_secret.kubecost_ca[0].arn : null
}

output "kubecost_ca_secret_name" {
  description = "Name of the Kubecost CA secret (KUBECOST_CA_CERTIFICATE_SECRET_NAME), or null."
  value       = var.create_kubecost_ca_secret ? aws_secretsmanager_secret.kubecost_ca[0].name : null
}
