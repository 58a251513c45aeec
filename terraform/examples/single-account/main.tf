# One account: the EKS cluster, the bucket, Glue, Athena and QuickSight.

provider "aws" {
  region = var.region
}

data "aws_eks_cluster" "this" {
  name = var.cluster_name
}

data "aws_iam_openid_connect_provider" "this" {
  url = data.aws_eks_cluster.this.identity[0].oidc[0].issuer
}

provider "helm" {
  kubernetes = {
    host                   = data.aws_eks_cluster.this.endpoint
    cluster_ca_certificate = base64decode(data.aws_eks_cluster.this.certificate_authority[0].data)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", var.cluster_name, "--region", var.region]
    }
  }
}

module "pipeline" {
  source = "../../modules/pipeline"

  bucket_name   = var.bucket_name
  create_bucket = true
  labels        = var.labels
  annotations   = var.annotations

  # Only the exporter's role may write under the data prefix.
  exporter_principal_arns = [module.exporter.writer_role_arn]

  tags = var.tags
}

module "exporter" {
  source = "../../modules/exporter"

  # Same account: the IRSA role writes, no role chaining.
  providers = {
    aws          = aws
    aws.pipeline = aws
  }

  cluster_arn       = data.aws_eks_cluster.this.arn
  oidc_provider_arn = data.aws_iam_openid_connect_provider.this.arn
  bucket_name       = module.pipeline.bucket_name
  labels            = var.labels
  annotations       = var.annotations

  create_helm_release = var.install_helm_release
  helm_values = {
    cronJob = { schedule = var.exporter_schedule }
  }

  tags = var.tags
}

# The bill next to the archive, when a CUR 2.0 table is given (docs/bill.md).
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
