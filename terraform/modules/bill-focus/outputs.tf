output "view_names" {
  description = "Names of the views, by kind: focus, focus_replaced."
  value       = { for k, v in local.views : k => v.name }
}

output "focus_replaced_view_name" {
  description = "The view to point a FOCUS tool (the CID FOCUS dashboard) at instead of the AWS FOCUS export."
  value       = local.views["focus_replaced"].name
}

output "allocated_method_id" {
  description = "The AllocatedMethodId of the allocated charges (docs/focus.md documents the method)."
  value       = local.method_id
}

output "view_sql" {
  description = "SQL of each view, by kind."
  value       = { for k, v in local.views : k => v.sql }
}

output "reader_policy_json" {
  description = "IAM policy of a reader of the views: read-only on the FOCUS export's files and the Glue entries. Attached to reader_role_names."
  value       = data.aws_iam_policy_document.reader.json
}

output "origin_view_name" {
  description = "With origin = cur, the view of the CUR 2.0 lines as FOCUS 1.2 origin charges (<prefix>_focus_origin_cur); null with origin = focus_export."
  value       = local.from_cur ? local.views["focus_origin_cur"].name : null
}
