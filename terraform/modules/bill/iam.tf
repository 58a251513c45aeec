# What a reader of the bill views needs beyond the archive: read-only on the
# CUR 2.0 export's files (list and get under its prefix, decrypt when the
# bucket is SSE-KMS), the Glue catalog entries Athena resolves, and, when a
# workgroup is given, running Athena queries there. Athena's own guide
# lists these actions for querying data in S3 through the Glue catalog:
# https://docs.aws.amazon.com/athena/latest/ug/managed-policies.html and
# https://docs.aws.amazon.com/athena/latest/ug/fine-grained-access-to-glue-resources.html

locals {
  cur_bucket_arn = "arn:${local.partition}:s3:::${var.cur_bucket_name}"
  glue_arn       = "arn:${local.partition}:glue:${local.region}:${local.account_id}"
}

data "aws_iam_policy_document" "reader" {
  # Without a prefix the whole bucket is listed, and a listing may then
  # carry no s3:prefix to match.
  statement {
    sid       = "ListTheCURPrefix"
    actions   = ["s3:ListBucket", "s3:GetBucketLocation"]
    resources = [local.cur_bucket_arn]

    dynamic "condition" {
      for_each = var.cur_s3_prefix == "" ? [] : [var.cur_s3_prefix]
      content {
        test     = "StringLike"
        variable = "s3:prefix"
        values   = ["${condition.value}*"]
      }
    }
  }

  statement {
    sid       = "ReadTheCURFiles"
    actions   = ["s3:GetObject"]
    resources = ["${local.cur_bucket_arn}/${var.cur_s3_prefix}*"]
  }

  dynamic "statement" {
    for_each = var.cur_kms_key_arn == null ? [] : [var.cur_kms_key_arn]
    content {
      sid       = "DecryptTheCURFiles"
      actions   = ["kms:Decrypt"]
      resources = [statement.value]
    }
  }

  statement {
    sid = "ReadTheCatalog"
    actions = [
      "glue:GetDatabase",
      "glue:GetDatabases",
      "glue:GetTable",
      "glue:GetTables",
      "glue:GetPartition",
      "glue:GetPartitions",
      "glue:BatchGetPartition",
    ]
    resources = [
      "${local.glue_arn}:catalog",
      "${local.glue_arn}:database/${var.cur_database_name}",
      "${local.glue_arn}:table/${var.cur_database_name}/${var.cur_table_name}",
      "${local.glue_arn}:database/${var.database_name}",
      "${local.glue_arn}:table/${var.database_name}/*",
    ]
  }

  dynamic "statement" {
    for_each = var.athena_workgroup_name == null ? [] : [var.athena_workgroup_name]
    content {
      sid = "QueryInTheWorkgroup"
      actions = [
        "athena:GetWorkGroup",
        "athena:StartQueryExecution",
        "athena:StopQueryExecution",
        "athena:GetQueryExecution",
        "athena:GetQueryResults",
      ]
      resources = ["arn:${local.partition}:athena:${local.region}:${local.account_id}:workgroup/${statement.value}"]
    }
  }

  dynamic "statement" {
    for_each = var.athena_results_bucket_name == null ? [] : [var.athena_results_bucket_name]
    content {
      sid = "WriteAndReadQueryResults"
      actions = [
        "s3:GetBucketLocation",
        "s3:ListBucket",
        "s3:GetObject",
        "s3:PutObject",
        "s3:AbortMultipartUpload",
        "s3:ListMultipartUploadParts",
      ]
      resources = ["arn:${local.partition}:s3:::${statement.value}", "arn:${local.partition}:s3:::${statement.value}/*"]
    }
  }
}

resource "aws_iam_role_policy" "reader" {
  for_each = toset(var.reader_role_names)

  name   = "${var.view_name_prefix}-reader"
  role   = each.value
  policy = data.aws_iam_policy_document.reader.json
}
