# The data bucket's policy: TLS only, and only the exporters (plus
# additional_writer_principal_arns) may put objects under the data prefix.
# Each exporter's own IAM policy narrows it further to its cluster's files.

locals {
  writer_principals = concat(var.exporter_principal_arns, var.additional_writer_principal_arns)
}

data "aws_iam_policy_document" "bucket" {
  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [local.bucket_arn, "${local.bucket_arn}/*"]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }

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

resource "aws_s3_bucket" "data" {
  count = var.create_bucket ? 1 : 0

  bucket        = var.bucket_name
  force_destroy = var.bucket_force_destroy
  tags          = var.tags
}

resource "aws_s3_bucket_public_access_block" "data" {
  count = var.create_bucket ? 1 : 0

  bucket                  = aws_s3_bucket.data[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "data" {
  count = var.create_bucket ? 1 : 0

  bucket = aws_s3_bucket.data[0].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "data" {
  count = var.create_bucket ? 1 : 0

  bucket = aws_s3_bucket.data[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.bucket_kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.bucket_kms_key_arn
    }
    bucket_key_enabled = var.bucket_kms_key_arn != null
  }
}

# The exporter aborts a failed multipart upload itself, but an upload whose
# CreateMultipartUpload reply was lost cannot be named, so it cannot be
# aborted by the exporter. This rule removes such leftovers (and their
# billed parts) after a day. Data objects never expire.
resource "aws_s3_bucket_lifecycle_configuration" "data" {
  count = var.create_bucket ? 1 : 0

  bucket = aws_s3_bucket.data[0].id
  rule {
    id     = "abort-incomplete-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

resource "aws_s3_bucket_policy" "data" {
  count = var.create_bucket || var.attach_bucket_policy ? 1 : 0

  bucket = var.create_bucket ? aws_s3_bucket.data[0].id : var.bucket_name
  policy = data.aws_iam_policy_document.bucket.json

  depends_on = [aws_s3_bucket_public_access_block.data]
}
