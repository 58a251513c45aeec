output "data_source_arn" {
  description = "ARN of the Athena data source."
  value       = aws_quicksight_data_source.athena.arn
}

output "data_set_arn" {
  description = "ARN of the SPICE dataset over the view."
  value       = aws_quicksight_data_set.this["kubecost"].arn
}

output "data_set_id" {
  description = "ID of the dataset."
  value       = aws_quicksight_data_set.this["kubecost"].data_set_id
}

output "dashboard_id" {
  description = "ID of the dashboard, or null when create_dashboard is false."
  value       = var.create_dashboard ? var.dashboard_id : null
}

output "dashboard_arn" {
  description = "ARN of the dashboard, or null when create_dashboard is false."
  value       = var.create_dashboard ? aws_cloudformation_stack.dashboard["kubecost"].outputs["Arn"] : null
}

output "analysis_arn" {
  description = "ARN of the analysis, or null when create_analysis is false."
  value       = var.create_analysis ? aws_cloudformation_stack.analysis[0].outputs["Arn"] : null
}

output "label_keys" {
  description = "Label keys offered by the dashboard's Cost by label sheet (from the view's properties.labels.* columns)."
  value       = local.label_keys
}

output "bill_data_set_arn" {
  description = "ARN of the Bill vs Kubecost dataset, or null without bill_view."
  value       = local.bill ? aws_quicksight_data_set.this["bill"].arn : null
}

output "bill_dashboard_arn" {
  description = "ARN of the Bill vs Kubecost dashboard, or null without bill_view or when create_dashboard is false."
  value       = local.bill && var.create_dashboard ? aws_cloudformation_stack.dashboard["bill"].outputs["Arn"] : null
}
