# Two accounts: the pipeline account (default credentials) holds the bucket,
# Glue, Athena and QuickSight; the cluster account holds the EKS cluster.
# The exporter's IRSA role in the cluster account assumes a parent role in
# the pipeline account, which alone may write the cluster's files.

provider "aws" {
  region = var.pipeline_region
}

provider "aws" {
  alias  = "cluster"
  region = var.cluster_region

  assume_role {
    role_arn = var.cluster_account_role_arn
  }
}

data "aws_eks_cluster" "this" {
  provider = aws.cluster
  name     = var.cluster_name
}

data "aws_iam_openid_connect_provider" "this" {
  provider = aws.cluster
  url      = data.aws_eks_cluster.this.identity[0].oidc[0].issuer
}

provider "helm" {
  kubernetes = {
    host                   = data.aws_eks_cluster.this.endpoint
    cluster_ca_certificate = base64decode(data.aws_eks_cluster.this.certificate_authority[0].data)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args = [
        "eks", "get-token",
        "--cluster-name", var.cluster_name,
        "--region", var.cluster_region,
        "--role-arn", var.cluster_account_role_arn,
      ]
    }
  }
}

module "pipeline" {
  source = "../../modules/pipeline"

  bucket_name   = var.bucket_name
  s3_prefix     = var.s3_prefix
  create_bucket = true
  labels        = var.labels
  annotations   = var.annotations

  # The parent role of each cluster; add one per exporter module.
  exporter_principal_arns = [module.exporter_cluster.writer_role_arn]

  tags = var.tags
}

# One module block per cluster. For another cluster, copy this block with
# that cluster's provider (and helm provider) and add its writer_role_arn
# to exporter_principal_arns above.
module "exporter_cluster" {
  source = "../../modules/exporter"

  providers = {
    aws          = aws.cluster
    aws.pipeline = aws
  }

  cluster_arn       = data.aws_eks_cluster.this.arn
  oidc_provider_arn = data.aws_iam_openid_connect_provider.this.arn
  bucket_name       = module.pipeline.bucket_name
  s3_prefix         = var.s3_prefix
  labels            = var.labels
  annotations       = var.annotations

  create_helm_release = var.install_helm_release

  tags = var.tags
}

# The bill next to the archive, when a CUR 2.0 table is given (docs/bill.md).
# Its Glue table must be in the pipeline account's catalog; the bucket may be
# the payer account's, whose bucket policy must then let the reader in.
module "bill" {
  source = "../../modules/bill"
  count  = var.cur == null ? 0 : 1

  database_name      = module.pipeline.database_name
  kubecost_view_name = module.pipeline.view_name
  # The same months on both sides, or the older bill shows as bill_only.
  bill_retention_months = module.pipeline.view_retention_months
  cur_database_name     = var.cur.database_name
  cur_table_name        = var.cur.table_name
  cur_bucket_name       = var.cur.bucket_name
  cur_s3_prefix         = var.cur.s3_prefix

  athena_workgroup_name      = module.pipeline.athena_workgroup_name
  athena_results_bucket_name = module.pipeline.athena_results_bucket_name
}

module "quicksight" {
  source = "../../modules/quicksight"

  principal_arns        = var.quicksight_principal_arns
  athena_workgroup_name = module.pipeline.athena_workgroup_name
  database_name         = module.pipeline.database_name
  view_name             = module.pipeline.view_name
  view_columns          = module.pipeline.view_columns

  bill_view = var.cur == null ? null : {
    database_name = module.pipeline.database_name
    view_name     = module.bill[0].namespace_daily_view_name
    columns       = module.bill[0].view_columns.namespace_daily
  }

  tags = var.tags
}
