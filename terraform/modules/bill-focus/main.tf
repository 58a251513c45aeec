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

  # With origin = cur the FOCUS views read the origin view
  # <prefix>_focus_origin_cur (the CUR 2.0 lines as FOCUS 1.2) in the
  # export's place; it exists only then.
  from_cur = var.origin == "cur"
  origin = local.from_cur ? {
    database        = var.database_name, table = "${var.view_name_prefix}_focus_origin_cur"
    bucket          = var.cur_bucket_name, prefix = var.cur_s3_prefix, kms = var.cur_kms_key_arn
    source_database = var.cur_database_name, source_table = var.cur_table_name
    } : {
    database        = var.focus_database_name, table = var.focus_table_name
    bucket          = var.focus_bucket_name, prefix = var.focus_s3_prefix, kms = var.focus_kms_key_arn
    source_database = var.focus_database_name, source_table = var.focus_table_name
  }

  template_vars = {
    database       = var.database_name
    split_view     = coalesce(var.split_view_name, "${var.view_name_prefix}_split_daily")
    focus_database = local.origin.database
    focus_table    = local.origin.table
    cur_database   = coalesce(var.cur_database_name, "-")
    cur_table      = coalesce(var.cur_table_name, "-")
    prefix         = var.view_name_prefix
  }

  views = { for v in local.spec.views : v.name => {
    name        = "${var.view_name_prefix}_${v.name}"
    description = v.description
    columns     = v.columns
    sql         = templatefile("${path.module}/templates/${v.name}.sql.tftpl", local.template_vars)
  } if local.from_cur || v.name != "focus_origin_cur" }

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

  lifecycle {
    precondition {
      condition     = local.origin.source_database != null && local.origin.source_table != null && local.origin.bucket != null
      error_message = "origin = focus_export needs focus_database_name, focus_table_name and focus_bucket_name; origin = cur needs cur_database_name, cur_table_name and cur_bucket_name."
    }
  }

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
