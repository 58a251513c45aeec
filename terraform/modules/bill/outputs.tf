output "view_names" {
  description = "Names of the views, by kind: split_daily, namespace_daily, cluster_daily, cluster_monthly."
  value       = { for k, v in local.views : k => v.name }
}

output "namespace_daily_view_name" {
  description = "The per cluster, namespace and day view (the QuickSight Bill vs Kubecost dataset's source)."
  value       = local.views["namespace_daily"].name
}

output "view_columns" {
  description = "Columns of each view, by kind, in order: name and glue, presto and quicksight types."
  value       = { for k, v in local.views : k => [for c in v.columns : { name = c.name, glue = c.glue, presto = c.presto, quicksight = c.quicksight }] }
}

output "view_sql" {
  description = "SQL of each view, by kind."
  value       = { for k, v in local.views : k => v.sql }
}

output "reader_policy_json" {
  description = "IAM policy of a reader of the views: read-only on the CUR files, the Glue catalog entries, and Athena in the workgroup when given. Attached to reader_role_names."
  value       = data.aws_iam_policy_document.reader.json
}
