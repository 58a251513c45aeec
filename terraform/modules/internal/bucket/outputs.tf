output "id" {
  description = "Bucket name: the created bucket's, else name."
  value       = local.id
}

output "arn" {
  description = "Bucket ARN."
  value       = local.arn
}

output "policy_json" {
  description = "The bucket policy: the TLS statement and policy_documents' statements."
  value       = data.aws_iam_policy_document.this.json
}
