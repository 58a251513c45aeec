# A private S3 bucket with the settings every bucket of these modules
# shares: no public access, no ACLs (the bucket owner owns every object),
# default encryption, incomplete multipart uploads removed after a day, and
# a policy that denies requests without TLS
# (https://docs.aws.amazon.com/AmazonS3/latest/userguide/security-best-practices.html).
# Callers add their own statements with policy_documents.

data "aws_partition" "current" {}

locals {
  # A named bucket's ARN is known at plan time; a prefixed one only after
  # S3 has chosen the name.
  arn = var.name != null ? "arn:${data.aws_partition.current.partition}:s3:::${var.name}" : aws_s3_bucket.this[0].arn
  id  = var.create ? aws_s3_bucket.this[0].id : var.name
}

resource "aws_s3_bucket" "this" {
  count = var.create ? 1 : 0

  bucket        = var.name
  bucket_prefix = var.name == null ? var.name_prefix : null
  force_destroy = var.force_destroy
  tags          = var.tags
}

resource "aws_s3_bucket_public_access_block" "this" {
  count = var.create ? 1 : 0

  bucket                  = aws_s3_bucket.this[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "this" {
  count = var.create ? 1 : 0

  bucket = aws_s3_bucket.this[0].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  count = var.create ? 1 : 0

  bucket = aws_s3_bucket.this[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

# A writer aborts a failed multipart upload itself, but an upload whose
# CreateMultipartUpload reply was lost cannot be named, so only a rule can
# remove it (and its billed parts).
resource "aws_s3_bucket_lifecycle_configuration" "this" {
  count = var.create ? 1 : 0

  bucket = aws_s3_bucket.this[0].id
  rule {
    id     = var.lifecycle_rule.id
    status = "Enabled"
    filter {
      prefix = var.lifecycle_rule.prefix
    }
    dynamic "expiration" {
      for_each = var.lifecycle_rule.expiration_days == null ? [] : [var.lifecycle_rule.expiration_days]
      content {
        days = expiration.value
      }
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

data "aws_iam_policy_document" "this" {
  source_policy_documents = var.policy_documents

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [local.arn, "${local.arn}/*"]

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
}

resource "aws_s3_bucket_policy" "this" {
  count = var.create || var.attach_policy ? 1 : 0

  bucket = local.id
  policy = data.aws_iam_policy_document.this.json

  # Set after the public access block, as the modules did before sharing it.
  depends_on = [aws_s3_bucket_public_access_block.this]
}
