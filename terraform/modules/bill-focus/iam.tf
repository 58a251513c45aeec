# What a reader of the FOCUS views needs beyond the bill module's reader
# policy (the split view's sources): read-only on the origin's files (the
# FOCUS export's, or with origin = cur the CUR 2.0 export's, as
# modules/bill/iam.tf grants them)
# (list and get under its prefix, decrypt when SSE-KMS) and the Glue
# entries Athena resolves. Athena's guide lists these actions:
# https://docs.aws.amazon.com/athena/latest/ug/fine-grained-access-to-glue-resources.html

locals {
  origin_bucket_arn = "arn:${local.partition}:s3:::${local.origin.bucket}"
  glue_arn          = "arn:${local.partition}:glue:${local.region}:${local.account_id}"
}

data "aws_iam_policy_document" "reader" {
  statement {
    sid       = "ListTheFOCUSPrefix"
    actions   = ["s3:ListBucket", "s3:GetBucketLocation"]
    resources = [local.origin_bucket_arn]

    dynamic "condition" {
      for_each = local.origin.prefix == "" ? [] : [local.origin.prefix]
      content {
        test     = "StringLike"
        variable = "s3:prefix"
        values   = ["${condition.value}*"]
      }
    }
  }

  statement {
    sid       = "ReadTheFOCUSFiles"
    actions   = ["s3:GetObject"]
    resources = ["${local.origin_bucket_arn}/${local.origin.prefix}*"]
  }

  dynamic "statement" {
    for_each = local.origin.kms == null ? [] : [local.origin.kms]
    content {
      sid       = "DecryptTheFOCUSFiles"
      actions   = ["kms:Decrypt"]
      resources = [statement.value]
    }
  }

  statement {
    sid = "ReadTheCatalog"
    actions = [
      "glue:GetDatabase",
      "glue:GetTable",
      "glue:GetTables",
      "glue:GetPartition",
      "glue:GetPartitions",
      "glue:BatchGetPartition",
    ]
    resources = [
      "${local.glue_arn}:catalog",
      "${local.glue_arn}:database/${local.origin.source_database}",
      "${local.glue_arn}:table/${local.origin.source_database}/${local.origin.source_table}",
      "${local.glue_arn}:database/${var.database_name}",
      "${local.glue_arn}:table/${var.database_name}/*",
    ]
  }
}

resource "aws_iam_role_policy" "reader" {
  for_each = toset(var.reader_role_names)

  name   = "${var.view_name_prefix}-focus-reader"
  role   = each.value
  policy = data.aws_iam_policy_document.reader.json
}
