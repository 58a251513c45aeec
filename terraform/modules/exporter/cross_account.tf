# Role chaining for a cluster whose account differs from the bucket's: the
# IRSA role (child) may only assume the parent role, and the parent role, in
# the pipeline account, trusts only the child and holds the S3 permissions.
# The exporter does this itself when IRSA_PARENT_IAM_ROLE_ARN is set.

data "aws_iam_policy_document" "parent_trust" {
  count = local.cross_account ? 1 : 0

  statement {
    sid     = "ExporterIRSARole"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "AWS"
      identifiers = [aws_iam_role.irsa.arn]
    }
  }
}

resource "aws_iam_role" "parent" {
  count    = local.cross_account ? 1 : 0
  provider = aws.pipeline

  name                 = local.role_name
  path                 = var.role_path
  description          = "kubecost-s3-exporter of ${var.cluster_arn}: writes its files, assumed by its IRSA role."
  assume_role_policy   = data.aws_iam_policy_document.parent_trust[0].json
  permissions_boundary = var.permissions_boundary_arn
  max_session_duration = 3600
  tags                 = var.tags
}

resource "aws_iam_role_policy" "parent_writer" {
  count    = local.cross_account ? 1 : 0
  provider = aws.pipeline

  name   = "write-own-kubecost-files"
  role   = aws_iam_role.parent[0].id
  policy = data.aws_iam_policy_document.writer.json
}

data "aws_iam_policy_document" "assume_parent" {
  count = local.cross_account ? 1 : 0

  statement {
    sid       = "AssumeParentRole"
    actions   = ["sts:AssumeRole"]
    resources = [aws_iam_role.parent[0].arn]
  }
}

resource "aws_iam_role_policy" "assume_parent" {
  count = local.cross_account ? 1 : 0

  name   = "assume-kubecost-s3-exporter-parent"
  role   = aws_iam_role.irsa.id
  policy = data.aws_iam_policy_document.assume_parent[0].json
}
