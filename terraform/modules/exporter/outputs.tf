output "cluster_name" {
  description = "EKS cluster name, from cluster_arn."
  value       = local.cluster_name
}

output "account_id" {
  description = "Cluster account, from cluster_arn (the account_id= partition)."
  value       = local.account_id
}

output "region" {
  description = "Cluster region, from cluster_arn (the region= partition)."
  value       = local.region
}

output "cross_account" {
  description = "Whether the bucket is in another account, so that roles are chained."
  value       = local.cross_account
}

output "role_arn" {
  description = "IRSA role of the service account (serviceAccount.roleArn)."
  value       = aws_iam_role.irsa.arn
}

output "parent_role_arn" {
  description = "Parent role in the pipeline account (IRSA_PARENT_IAM_ROLE_ARN), or null for a cluster in the bucket's account."
  value       = local.cross_account ? aws_iam_role.parent[0].arn : null
}

output "writer_role_arn" {
  description = "The role whose credentials write to S3: the parent role when chaining, else the IRSA role. Pass it to the pipeline module's exporter_principal_arns."
  value       = local.writer_role_arn
}

output "partition_prefix" {
  description = "Key prefix this cluster lists: [S3_PREFIX]account_id=<account>/region=<region>/."
  value       = local.partition_prefix
}

output "object_arns" {
  description = "S3 object ARN patterns this cluster may put, one per codec."
  value       = local.object_arns
}

output "helm_values" {
  description = "Chart values that wire the release to these roles, for helm install -f (helm_release uses them)."
  value       = local.helm_values
}

output "env" {
  description = "The same configuration as exporter environment variables."
  value       = local.env
}

output "helm_release_name" {
  description = "Name of the Helm release, or null when create_helm_release is false."
  value       = var.create_helm_release ? helm_release.this[0].name : null
}

output "partition_prefixes" {
  description = "Every account/region key prefix the role may list and write under: one per distinct account and region of federated_clusters, else partition_prefix alone."
  value       = local.partition_prefixes
}
