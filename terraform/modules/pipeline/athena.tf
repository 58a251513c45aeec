locals {
  create_results_bucket = var.athena_results_bucket_name == null
  results_bucket        = local.create_results_bucket ? aws_s3_bucket.athena_results[0].id : var.athena_results_bucket_name
  results_kms           = var.athena_encryption_option == "SSE_S3" ? null : var.athena_kms_key_arn
}

resource "aws_athena_workgroup" "this" {
  name          = var.athena_workgroup_name
  description   = "Queries of the kubecost-s3-exporter data (QuickSight and ad hoc)."
  force_destroy = var.athena_workgroup_force_destroy

  configuration {
    enforce_workgroup_configuration    = true
    publish_cloudwatch_metrics_enabled = true
    bytes_scanned_cutoff_per_query     = var.athena_bytes_scanned_cutoff_per_query

    engine_version {
      selected_engine_version = "Athena engine version 3"
    }

    result_configuration {
      output_location       = "s3://${local.results_bucket}/${var.athena_results_prefix}"
      expected_bucket_owner = local.create_results_bucket ? local.account_id : null

      encryption_configuration {
        encryption_option = var.athena_encryption_option
        kms_key_arn       = local.results_kms
      }
    }
  }

  tags = var.tags

  lifecycle {
    precondition {
      condition     = var.athena_encryption_option == "SSE_S3" || var.athena_kms_key_arn != null
      error_message = "athena_kms_key_arn is required when athena_encryption_option is SSE_KMS or CSE_KMS."
    }
  }
}

resource "aws_s3_bucket" "athena_results" {
  count = local.create_results_bucket ? 1 : 0

  bucket_prefix = "${substr(var.name_prefix, 0, 20)}-athena-results-"
  force_destroy = true
  tags          = var.tags
}

resource "aws_s3_bucket_public_access_block" "athena_results" {
  count = local.create_results_bucket ? 1 : 0

  bucket                  = aws_s3_bucket.athena_results[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "athena_results" {
  count = local.create_results_bucket ? 1 : 0

  bucket = aws_s3_bucket.athena_results[0].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "athena_results" {
  count = local.create_results_bucket ? 1 : 0

  bucket = aws_s3_bucket.athena_results[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = local.results_kms == null ? "AES256" : "aws:kms"
      kms_master_key_id = local.results_kms
    }
    bucket_key_enabled = local.results_kms != null
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "athena_results" {
  count = local.create_results_bucket ? 1 : 0

  bucket = aws_s3_bucket.athena_results[0].id
  rule {
    id     = "expire-query-results"
    status = "Enabled"
    filter {
      prefix = var.athena_results_prefix
    }
    expiration {
      days = var.athena_results_expiration_days
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

data "aws_iam_policy_document" "athena_results" {
  count = local.create_results_bucket ? 1 : 0

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.athena_results[0].arn, "${aws_s3_bucket.athena_results[0].arn}/*"]

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

resource "aws_s3_bucket_policy" "athena_results" {
  count = local.create_results_bucket ? 1 : 0

  bucket = aws_s3_bucket.athena_results[0].id
  policy = data.aws_iam_policy_document.athena_results[0].json

  depends_on = [aws_s3_bucket_public_access_block.athena_results]
}
