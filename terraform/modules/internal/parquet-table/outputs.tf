output "name" {
  description = "Table name."
  value       = aws_glue_catalog_table.this.name
}

output "arn" {
  description = "Table ARN (a resource of Glue's IAM actions)."
  value       = aws_glue_catalog_table.this.arn
}

output "database_name" {
  description = "Glue database of the table."
  value       = aws_glue_catalog_table.this.database_name
}
