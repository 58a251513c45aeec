locals {
  create_results_bucket = var.athena_results_bucket_name == null
  results_bucket        = local.create_results_bucket ? module.athena_results.id : var.athena_results_bucket_name
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

# The query results bucket, unless athena_results_bucket_name names one:
# private, encrypted like the results, TLS only, results expiring.
module "athena_results" {
  source = "../internal/bucket"

  create        = local.create_results_bucket
  name_prefix   = "${substr(var.name_prefix, 0, 20)}-athena-results-"
  force_destroy = true
  kms_key_arn   = local.results_kms
  lifecycle_rule = {
    id              = "expire-query-results"
    prefix          = var.athena_results_prefix
    expiration_days = var.athena_results_expiration_days
  }
  tags = var.tags
}

moved {
  from = aws_s3_bucket.athena_results
  to   = module.athena_results.aws_s3_bucket.this
}

moved {
  from = aws_s3_bucket_public_access_block.athena_results
  to   = module.athena_results.aws_s3_bucket_public_access_block.this
}

moved {
  from = aws_s3_bucket_ownership_controls.athena_results
  to   = module.athena_results.aws_s3_bucket_ownership_controls.this
}

moved {
  from = aws_s3_bucket_server_side_encryption_configuration.athena_results
  to   = module.athena_results.aws_s3_bucket_server_side_encryption_configuration.this
}

moved {
  from = aws_s3_bucket_lifecycle_configuration.athena_results
  to   = module.athena_results.aws_s3_bucket_lifecycle_configuration.this
}

moved {
  from = aws_s3_bucket_policy.athena_results
  to   = module.athena_results.aws_s3_bucket_policy.this
}
