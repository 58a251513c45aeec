output "bucket_name" {
  description = "Bucket of the exporter's Parquet files, in the pipeline account."
  value       = module.pipeline.bucket_name
}

output "exporter_role_arn" {
  description = "IRSA role of the exporter's service account, in the cluster account."
  value       = module.exporter_cluster.role_arn
}

output "exporter_parent_role_arn" {
  description = "Parent role in the pipeline account (IRSA_PARENT_IAM_ROLE_ARN)."
  value       = module.exporter_cluster.parent_role_arn
}

output "exporter_helm_values" {
  description = "Chart values for helm install -f, when install_helm_release is false."
  value       = module.exporter_cluster.helm_values
}

output "athena_workgroup_name" {
  description = "Athena workgroup for ad hoc queries."
  value       = module.pipeline.athena_workgroup_name
}

output "dashboard_arn" {
  description = "ARN of the QuickSight dashboard."
  value       = module.quicksight.dashboard_arn
}

output "bill_reader_policy_json" {
  description = "IAM policy a reader of the bill views needs (attach it to QuickSight's service role), or null without cur."
  value       = var.cur == null ? null : module.bill[0].reader_policy_json
}
