data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.id

  # views.json and templates/*.sql.tftpl are generated (`make generate`,
  # terraform/internal/gen) from the exporter's column contract and the
  # CUR 2.0 rules; a Go test fails when they are stale. The SQL is
  # Athena engine 3 (Trino).
  view_specs = jsondecode(file("${path.module}/views.json")).views

  template_vars = {
    database      = var.database_name
    kubecost_view = var.kubecost_view_name
    cur_database  = var.cur_database_name
    cur_table     = var.cur_table_name
    prefix        = var.view_name_prefix
    bill_months   = var.bill_retention_months
  }

  views = { for v in local.view_specs : v.name => {
    name        = "${var.view_name_prefix}_${v.name}"
    description = v.description
    columns     = v.columns
    sql         = templatefile("${path.module}/templates/${v.name}.sql.tftpl", local.template_vars)
  } }

  # An Athena view is a Glue table of type VIRTUAL_VIEW whose original text
  # is the base64 of this JSON ("Presto view"); its columns use Presto types.
  presto_views = { for k, v in local.views : k => {
    originalSql = v.sql
    catalog     = "awsdatacatalog"
    schema      = var.database_name
    columns     = [for c in v.columns : { name = c.name, type = c.presto }]
  } }
}

# namespace_daily reads split_daily, cluster_daily reads namespace_daily
# and cluster_monthly reads cluster_daily, by name: Athena resolves a
# view's references when it is queried, so they can be created in any
# order.
resource "aws_glue_catalog_table" "view" {
  for_each = local.views

  name          = each.value.name
  database_name = var.database_name
  description   = each.value.description
  table_type    = "VIRTUAL_VIEW"

  parameters = {
    presto_view = "true"
    comment     = "Presto View"
  }

  view_original_text = "/* Presto View: ${base64encode(jsonencode(local.presto_views[each.key]))} */"
  view_expanded_text = "/* Presto View */"

  storage_descriptor {
    dynamic "columns" {
      for_each = each.value.columns
      content {
        name = columns.value.name
        type = columns.value.glue
      }
    }
  }
}
