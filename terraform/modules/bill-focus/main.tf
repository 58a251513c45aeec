data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.id

  # views.json and templates/*.sql.tftpl are generated (`make generate`,
  # terraform/internal/gen/focusviews.go); a Go test fails when they are
  # stale. The SQL is Athena engine 3 (Trino).
  spec      = jsondecode(file("${path.module}/views.json"))
  method_id = local.spec.method_id

  template_vars = {
    database       = var.database_name
    split_view     = coalesce(var.split_view_name, "${var.view_name_prefix}_split_daily")
    focus_database = var.focus_database_name
    focus_table    = var.focus_table_name
    prefix         = var.view_name_prefix
  }

  views = { for v in local.spec.views : v.name => {
    name        = "${var.view_name_prefix}_${v.name}"
    description = v.description
    columns     = v.columns
    sql         = templatefile("${path.module}/templates/${v.name}.sql.tftpl", local.template_vars)
  } }

  presto_views = { for k, v in local.views : k => {
    originalSql = v.sql
    catalog     = "awsdatacatalog"
    schema      = var.database_name
    columns     = [for c in v.columns : { name = c.name, type = c.presto }]
  } }
}

# Both are Glue VIRTUAL_VIEW tables, never EXTERNAL_TABLE: the Cloud
# Intelligence Dashboards' FOCUS consolidation unions only EXTERNAL_TABLEs
# that have its minimum FOCUS columns, so it never adds these views to AWS's
# own FOCUS export (docs/focus.md; terraform/internal/focuscheck holds the
# test). focus_replaced reads focus by name: Athena resolves a view's
# references when it is queried, so the two can be created in any order.
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
