# Optional CA bundle for a Kubecost served over TLS with a private CA. The
# exporter reads it with the credentials that write to S3 (the parent role
# for a cross-account cluster), so it lives in this account.

resource "aws_secretsmanager_secret" "kubecost_ca" {
  count = var.create_kubecost_ca_secret ? 1 : 0

  name                    = var.kubecost_ca_secret_name
  description             = "PEM CA bundle that kubecost-s3-exporter trusts for Kubecost's TLS endpoint."
  kms_key_id              = var.kubecost_ca_secret_kms_key_id
  recovery_window_in_days = var.kubecost_ca_secret_recovery_window_in_days
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "kubecost_ca" {
  count = var.create_kubecost_ca_secret && var.kubecost_ca_certificate_pem != null ? 1 : 0

  secret_id     = aws_secretsmanager_secret.kubecost_ca[0].id
  secret_string = var.kubecost_ca_certificate_pem
}

data "aws_iam_policy_document" "kubecost_ca" {
  count = var.create_kubecost_ca_secret && length(var.exporter_principal_arns) > 0 ? 1 : 0

  statement {
    sid       = "AllowExportersToReadTheCA"
    actions   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    resources = ["*"]

    principals {
      type        = "AWS"
      identifiers = var.exporter_principal_arns
    }
  }
}

resource "aws_secretsmanager_secret_policy" "kubecost_ca" {
  count = var.create_kubecost_ca_secret && length(var.exporter_principal_arns) > 0 ? 1 : 0

  secret_arn          = aws_secretsmanager_secret.kubecost_ca[0].arn
  policy              = data.aws_iam_policy_document.kubecost_ca[0].json
  block_public_policy = true
}
