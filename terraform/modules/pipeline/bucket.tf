# The data bucket's policy: only the exporters (plus
# additional_writer_principal_arns) may put objects under the data prefix.
# Each exporter's own IAM policy narrows it further to its cluster's files.

locals {
  writer_principals = concat(var.exporter_principal_arns, var.additional_writer_principal_arns)
}

data "aws_iam_policy_document" "bucket" {
  dynamic "statement" {
    for_each = length(var.exporter_principal_arns) > 0 ? [1] : []
    content {
      sid    = "AllowExportersToWriteDailyFiles"
      effect = "Allow"
      # Get and Delete serve re-exports: HeadObject reads how a file was
      # made, and a codec switch deletes the old file. The exporters'
      # identity policies narrow all four to each cluster's own files.
      actions   = ["s3:PutObject", "s3:AbortMultipartUpload", "s3:GetObject", "s3:DeleteObject"]
      resources = [local.data_object_arn]

      principals {
        type        = "AWS"
        identifiers = var.exporter_principal_arns
      }
    }
  }

  dynamic "statement" {
    for_each = length(var.exporter_principal_arns) > 0 ? [1] : []
    content {
      sid       = "AllowExportersToListUnfinishedUploads"
      effect    = "Allow"
      actions   = ["s3:ListBucketMultipartUploads"]
      resources = [local.bucket_arn]

      principals {
        type        = "AWS"
        identifiers = var.exporter_principal_arns
      }
    }
  }

  dynamic "statement" {
    for_each = length(var.exporter_principal_arns) > 0 ? [1] : []
    content {
      sid       = "AllowExportersToListTheDataPrefix"
      effect    = "Allow"
      actions   = ["s3:ListBucket"]
      resources = [local.bucket_arn]

      principals {
        type        = "AWS"
        identifiers = var.exporter_principal_arns
      }

      condition {
        test     = "StringLike"
        variable = "s3:prefix"
        values   = ["${var.s3_prefix}account_id=*"]
      }
    }
  }

  dynamic "statement" {
    for_each = length(local.writer_principals) > 0 ? [1] : []
    content {
      sid       = "DenyWritesByOtherPrincipals"
      effect    = "Deny"
      actions   = ["s3:PutObject"]
      resources = [local.data_object_arn]

      principals {
        type        = "*"
        identifiers = ["*"]
      }

      condition {
        test     = "ArnNotLike"
        variable = "aws:PrincipalArn"
        values   = local.writer_principals
      }
    }
  }
}

# The bucket itself, private and encrypted, with the policy above after
# the TLS-only statement (modules/internal/bucket).
module "data_bucket" {
  source = "../internal/bucket"

  create           = var.create_bucket
  name             = var.bucket_name
  force_destroy    = var.bucket_force_destroy
  kms_key_arn      = var.bucket_kms_key_arn
  attach_policy    = var.attach_bucket_policy
  policy_documents = [data.aws_iam_policy_document.bucket.json]
  tags             = var.tags
}

# The resources this file held before the shared module: state moves, no
# bucket is destroyed.
moved {
  from = aws_s3_bucket.data
  to   = module.data_bucket.aws_s3_bucket.this
}

moved {
  from = aws_s3_bucket_public_access_block.data
  to   = module.data_bucket.aws_s3_bucket_public_access_block.this
}

moved {
  from = aws_s3_bucket_ownership_controls.data
  to   = module.data_bucket.aws_s3_bucket_ownership_controls.this
}

moved {
  from = aws_s3_bucket_server_side_encryption_configuration.data
  to   = module.data_bucket.aws_s3_bucket_server_side_encryption_configuration.this
}

moved {
  from = aws_s3_bucket_lifecycle_configuration.data
  to   = module.data_bucket.aws_s3_bucket_lifecycle_configuration.this
}

moved {
  from = aws_s3_bucket_policy.data
  to   = module.data_bucket.aws_s3_bucket_policy.this
}
