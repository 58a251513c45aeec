locals {
  writer_role_arn = local.cross_account ? aws_iam_role.parent[0].arn : aws_iam_role.irsa.arn

  # Chart values (chart/values.yaml) that tie the release to these roles.
  helm_values = {
    exporter = merge(
      {
        clusterId         = local.federated ? "" : var.cluster_arn
        clusterArns       = { for c in var.federated_clusters : c.id => c.arn }
        s3BucketName      = var.bucket_name
        s3Prefix          = var.s3_prefix
        irsaParentRoleArn = local.cross_account ? aws_iam_role.parent[0].arn : ""
        labels            = var.labels
        annotations       = var.annotations
        # Empty: the exporter finds Kubecost (3.x frontend, then 1.x/2.x).
        kubecostApiEndpoint = var.kubecost_api_endpoint
        kubecostNamespace   = var.kubecost_namespace
        kubecostRelease     = var.kubecost_release
      },
      # Federated clusters may be in several accounts: name the bucket's.
      local.federated ? { expectedBucketOwner = local.pipeline_account_id } : {},
      # Kubecost's bucket configuration; the bucket stays named above too,
      # because IAM is written for it and the exporter stops when the file
      # names another one.
      var.object_store_secret == null ? {} : { objectStoreExistingSecret = var.object_store_secret },
    )
    serviceAccount = {
      create  = true
      name    = var.service_account_name
      roleArn = aws_iam_role.irsa.arn
    }
    image = merge({ repository = var.image_repository }, var.image_version == null ? {} : { tag = var.image_version })
  }

  # The same configuration as environment variables, for users who deploy
  # the exporter without the chart.
  env = {
    CLUSTER_ID               = local.federated ? "" : var.cluster_arn
    CLUSTER_ARNS             = join(",", [for c in var.federated_clusters : "${c.id}=${c.arn}"])
    S3_EXPECTED_BUCKET_OWNER = local.federated ? local.pipeline_account_id : ""
    S3_BUCKET_NAME           = var.bucket_name
    S3_PREFIX                = var.s3_prefix
    IRSA_PARENT_IAM_ROLE_ARN = local.cross_account ? aws_iam_role.parent[0].arn : ""
    LABELS                   = join(", ", var.labels)
    ANNOTATIONS              = join(", ", var.annotations)
    KUBECOST_API_ENDPOINT    = var.kubecost_api_endpoint
    KUBECOST_NAMESPACE       = var.kubecost_namespace
    KUBECOST_RELEASE         = var.kubecost_release
  }
}

resource "helm_release" "this" {
  count = var.create_helm_release ? 1 : 0

  name = var.helm_release_name
  # From the OCI repository the release publishes to by default; with
  # helm_repository = null, a local chart (this repository's by default).
  chart            = var.helm_repository == null ? coalesce(var.helm_chart, "${path.module}/../../../chart") : coalesce(var.helm_chart, "kubecost-s3-exporter")
  repository       = var.helm_repository
  version          = var.helm_repository == null ? null : var.helm_chart_version
  namespace        = var.service_account_namespace
  create_namespace = var.helm_create_namespace
  timeout          = var.helm_timeout
  wait             = true

  values = [
    yamlencode(local.helm_values),
    yamlencode(var.helm_values),
  ]

  # The install-time export Job starts at once and needs the roles and their policies.
  depends_on = [
    aws_iam_role_policy.writer,
    aws_iam_role_policy.parent_writer,
    aws_iam_role_policy.assume_parent,
  ]
}
