data "aws_caller_identity" "cluster" {}

data "aws_caller_identity" "pipeline" {
  provider = aws.pipeline
}

locals {
  cluster = regex("^arn:(?P<partition>[^:]+):eks:(?P<region>[^:]+):(?P<account>[0-9]{12}):cluster/(?P<name>.+)$", var.cluster_arn)

  partition           = local.cluster.partition
  region              = local.cluster.region
  account_id          = local.cluster.account
  cluster_name        = local.cluster.name
  pipeline_account_id = data.aws_caller_identity.pipeline.account_id

  # A cluster outside the bucket's account chains roles: IRSA role (child,
  # cluster account) -> parent role (pipeline account), which writes.
  cross_account = local.account_id != local.pipeline_account_id

  oidc_account = regex("^arn:[^:]+:iam::([0-9]{12}):", var.oidc_provider_arn)[0]
  oidc_issuer  = regex("^arn:[^:]+:iam::[0-9]{12}:oidc-provider/(.+)$", var.oidc_provider_arn)[0]

  role_name = coalesce(var.role_name, "kubecost-s3-exporter-${substr(local.cluster_name, 0, 30)}-${substr(sha1(var.cluster_arn), 0, 8)}")

  # The exporter's key layout (CONTRACT §3):
  # [S3_PREFIX]account_id=<account>/region=<region>/year=<YYYY>/month=<MM>/<YYYY-MM-DD>_<cluster>.<codec>.parquet
  # `?` matches exactly one character, so a file name must be a 10-character
  # day, "_", this cluster's exact name and a codec: cluster "prod" cannot
  # write "prod-eu"'s or "eu_prod"'s files.
  partition_prefix = "${var.s3_prefix}account_id=${local.account_id}/region=${local.region}/"
  bucket_arn       = "arn:${local.partition}:s3:::${var.bucket_name}"

  # The clusters whose files the role writes: with federated_clusters, each
  # of them (the exporter runs on the primary, cluster_arn, and writes every
  # cluster under that cluster's own keys); else cluster_arn alone.
  federated = length(var.federated_clusters) > 0
  written = local.federated ? [
    for c in var.federated_clusters :
    regex("^arn:(?P<partition>[^:]+):eks:(?P<region>[^:]+):(?P<account>[0-9]{12}):cluster/(?P<name>.+)$", c.arn)
  ] : [local.cluster]
  # One listing per account/region prefix, as the exporter lists.
  partition_prefixes = distinct([for c in local.written : "${var.s3_prefix}account_id=${c.account}/region=${c.region}/"])
  object_arns = flatten([
    for c in local.written : [
      for codec in var.codecs :
      "${local.bucket_arn}/${var.s3_prefix}account_id=${c.account}/region=${c.region}/year=????/month=??/????-??-??_${c.name}.${codec}.parquet"
    ]
  ])
}

data "aws_iam_policy_document" "irsa_trust" {
  statement {
    sid     = "ExporterServiceAccount"
    actions = ["sts:AssumeRoleWithWebIdentity"]

    principals {
      type        = "Federated"
      identifiers = [var.oidc_provider_arn]
    }

    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:sub"
      values   = ["system:serviceaccount:${var.service_account_namespace}:${var.service_account_name}"]
    }

    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

# What the writing role may do: list its own account/region prefix, put (or
# abort the multipart upload of) its own cluster's daily files, read the
# metadata of and delete those same files, to re-export a day whose config
# or Kubecost total changed (HeadObject needs s3:GetObject) and to remove
# the old-codec file after a codec switch, and list the bucket's unfinished
# uploads so that a run can abort the ones a killed run left behind.
data "aws_iam_policy_document" "writer" {
  statement {
    sid       = "ListOwnPartitionPrefix"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]

    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = [for p in local.partition_prefixes : "${p}*"]
    }
  }

  # ListBucketMultipartUploads has no s3:prefix condition key, so it cannot
  # be narrowed to the partition prefix. It shows the keys of unfinished
  # uploads, never data; aborting stays limited to this cluster's files.
  statement {
    sid       = "ListUnfinishedUploads"
    actions   = ["s3:ListBucketMultipartUploads"]
    resources = [local.bucket_arn]
  }

  statement {
    sid       = "WriteOwnDailyFiles"
    actions   = ["s3:PutObject", "s3:AbortMultipartUpload"]
    resources = local.object_arns
  }

  statement {
    sid       = "ReplaceOwnDailyFiles"
    actions   = ["s3:GetObject", "s3:DeleteObject"]
    resources = local.object_arns
  }

  dynamic "statement" {
    for_each = length(var.kms_key_arns) > 0 ? [1] : []
    content {
      sid       = "UseEncryptionKeys"
      actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
      resources = var.kms_key_arns
    }
  }

  dynamic "statement" {
    for_each = length(var.secret_arns) > 0 ? [1] : []
    content {
      sid       = "ReadKubecostSecrets"
      actions   = ["secretsmanager:GetSecretValue"]
      resources = var.secret_arns
    }
  }
}

resource "aws_iam_role" "irsa" {
  name                 = local.role_name
  path                 = var.role_path
  description          = "kubecost-s3-exporter of ${var.cluster_arn} (IRSA${local.cross_account ? ", assumes the parent role" : ""})."
  assume_role_policy   = data.aws_iam_policy_document.irsa_trust.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags

  lifecycle {
    precondition {
      condition     = data.aws_caller_identity.cluster.account_id == local.account_id
      error_message = "The module's default aws provider must be configured for the cluster's account (${local.account_id}), where the IRSA role is created."
    }
    precondition {
      condition     = local.oidc_account == local.account_id
      error_message = "oidc_provider_arn must be in the cluster's account (${local.account_id})."
    }
    precondition {
      condition     = alltrue([for c in local.written : c.partition == local.partition])
      error_message = "Every federated cluster must be in the partition of cluster_arn (${local.partition}): one role writes one partition."
    }
  }
}

resource "aws_iam_role_policy" "writer" {
  count = local.cross_account ? 0 : 1

  name   = "write-own-kubecost-files"
  role   = aws_iam_role.irsa.id
  policy = data.aws_iam_policy_document.writer.json
}
