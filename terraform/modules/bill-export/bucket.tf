# The policy AWS applies to a Data Exports bucket: the two billing
# services may check the policy and put objects, on behalf of this
# account's exports and CUR definitions only
# (https://docs.aws.amazon.com/cur/latest/userguide/dataexports-s3-bucket.html),
# and (modules/internal/bucket) nobody may use it without TLS.
data "aws_iam_policy_document" "bucket" {
  statement {
    sid       = "EnableAWSDataExportsToWriteToS3AndCheckPolicy"
    actions   = ["s3:PutObject", "s3:GetBucketPolicy"]
    resources = [local.bucket_arn, "${local.bucket_arn}/*"]

    principals {
      type        = "Service"
      identifiers = ["billingreports.amazonaws.com", "bcm-data-exports.amazonaws.com"]
    }

    condition {
      test     = "StringLike"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }

    condition {
      test     = "StringLike"
      variable = "aws:SourceArn"
      values = [
        "arn:${local.partition}:cur:us-east-1:${local.account_id}:definition/*",
        "arn:${local.partition}:bcm-data-exports:us-east-1:${local.account_id}:export/*",
      ]
    }
  }
}

module "bucket" {
  source = "../internal/bucket"

  create           = var.create_bucket
  name             = var.bucket_name
  attach_policy    = var.attach_bucket_policy
  policy_documents = [data.aws_iam_policy_document.bucket.json]
  tags             = var.tags
}

# The resources this file held before the shared module: state moves, no
# bucket is destroyed.
moved {
  from = aws_s3_bucket.this
  to   = module.bucket.aws_s3_bucket.this
}

moved {
  from = aws_s3_bucket_public_access_block.this
  to   = module.bucket.aws_s3_bucket_public_access_block.this
}

moved {
  from = aws_s3_bucket_ownership_controls.this
  to   = module.bucket.aws_s3_bucket_ownership_controls.this
}

moved {
  from = aws_s3_bucket_server_side_encryption_configuration.this
  to   = module.bucket.aws_s3_bucket_server_side_encryption_configuration.this
}

moved {
  from = aws_s3_bucket_policy.this
  to   = module.bucket.aws_s3_bucket_policy.this
}
