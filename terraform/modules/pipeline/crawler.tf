# The crawler targets the table Terraform defines (a catalog target), so it
# only adds partitions: the table's columns stay those of the contract.

data "aws_iam_policy_document" "crawler_trust" {
  statement {
    sid     = "GlueAssumesThisRole"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["glue.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}

data "aws_iam_policy_document" "crawler" {
  statement {
    sid     = "ReadTheCatalogTable"
    actions = ["glue:GetDatabase", "glue:GetTable"]
    resources = [
      "arn:${local.partition}:glue:${local.region}:${local.account_id}:catalog",
      aws_glue_catalog_database.this.arn,
      module.table.arn,
    ]
  }

  statement {
    sid = "ManagePartitionsOfTheTable"
    actions = [
      "glue:GetPartition",
      "glue:GetPartitions",
      "glue:BatchGetPartition",
      "glue:CreatePartition",
      "glue:BatchCreatePartition",
      "glue:UpdatePartition",
      "glue:BatchUpdatePartition",
    ]
    resources = [
      "arn:${local.partition}:glue:${local.region}:${local.account_id}:catalog",
      aws_glue_catalog_database.this.arn,
      module.table.arn,
    ]
  }

  # The crawler lists the table's location: the whole bucket without an
  # S3_PREFIX (a listing may then carry no s3:prefix to match), else only
  # that prefix.
  statement {
    sid       = "ListTheDataPrefix"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]

    dynamic "condition" {
      for_each = var.s3_prefix == "" ? [] : [var.s3_prefix]
      content {
        test     = "StringLike"
        variable = "s3:prefix"
        values   = ["${condition.value}*"]
      }
    }
  }

  statement {
    sid       = "ReadTheDataFiles"
    actions   = ["s3:GetObject"]
    resources = [local.data_object_arn]
  }

  statement {
    sid     = "WriteCrawlerLogs"
    actions = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]
    resources = [
      "arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:/aws-glue/crawlers",
      "arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:/aws-glue/crawlers:*",
    ]
  }

  dynamic "statement" {
    for_each = var.bucket_kms_key_arn == null ? [] : [var.bucket_kms_key_arn]
    content {
      sid       = "DecryptTheDataFiles"
      actions   = ["kms:Decrypt"]
      resources = [statement.value]
    }
  }
}

resource "aws_iam_role" "crawler" {
  count = var.create_crawler ? 1 : 0

  name               = "${var.name_prefix}-crawler"
  description        = "Glue crawler of the kubecost-s3-exporter table: adds partitions, nothing else."
  assume_role_policy = data.aws_iam_policy_document.crawler_trust.json
  tags               = var.tags
}

resource "aws_iam_role_policy" "crawler" {
  count = var.create_crawler ? 1 : 0

  name   = "crawl-kubecost-table"
  role   = aws_iam_role.crawler[0].id
  policy = data.aws_iam_policy_document.crawler.json
}

resource "aws_glue_crawler" "this" {
  count = var.create_crawler ? 1 : 0

  name          = "${var.name_prefix}-${var.table_name}"
  description   = "Adds the new account_id/region/year/month partitions of ${var.database_name}.${var.table_name}."
  database_name = aws_glue_catalog_database.this.name
  role          = aws_iam_role.crawler[0].arn
  schedule      = var.crawler_schedule

  catalog_target {
    database_name = aws_glue_catalog_database.this.name
    tables        = [module.table.name]
  }

  # The table is Terraform's: log schema changes instead of applying them,
  # and let new partitions inherit the table's columns and SerDe.
  schema_change_policy {
    delete_behavior = "LOG"
    update_behavior = "LOG"
  }

  configuration = jsonencode({
    Version = 1
    CrawlerOutput = {
      Partitions = { AddOrUpdateBehavior = "InheritFromTable" }
    }
  })

  tags = var.tags

  depends_on = [aws_iam_role_policy.crawler]
}
