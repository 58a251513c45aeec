data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.id

  # columns.json is generated from the exporter's column contract
  # (`kubecost-s3-exporter schema --format json`); a Go test fails when it
  # is stale. Glue, Athena and the QuickSight dataset use lowercase column
  # names; Athena matches Parquet columns by name, case-insensitively.
  schema = jsondecode(file("${path.module}/columns.json"))

  # Label and annotation columns are strings, typed like any other string column.
  string_type = [for c in local.schema.columns : c if c.type == "string"][0]

  # The CCA columns, then one per LABELS and ANNOTATIONS key, then the
  # columns appended in schema version 2 (after_labels): every label and
  # annotation as a map, idle split, GPU, volumes, load balancers... Maps,
  # lists and structs have no QuickSight type ("") and stay out of the
  # QuickSight dataset; Athena reads them from the table and the view.
  base_columns = [for c in local.schema.columns : {
    name       = lower(c.name)
    glue       = c.glue
    presto     = c.presto
    quicksight = c.quicksight
  } if !try(c.after_labels, false)]
  appended_columns = [for c in local.schema.columns : {
    name       = lower(c.name)
    glue       = c.glue
    presto     = c.presto
    quicksight = c.quicksight
  } if try(c.after_labels, false)]
  label_columns = [for k in var.labels : {
    name       = lower("properties.labels.${k}")
    glue       = local.string_type.glue
    presto     = local.string_type.presto
    quicksight = local.string_type.quicksight
  }]
  annotation_columns = [for k in var.annotations : {
    name       = lower("properties.annotations.${k}")
    glue       = local.string_type.glue
    presto     = local.string_type.presto
    quicksight = local.string_type.quicksight
  }]

  # Table columns, in the exporter's order, then the Hive partition keys.
  columns = concat(local.base_columns, local.label_columns, local.annotation_columns, local.appended_columns)
  partition_keys = [for p in local.schema.partition_keys : {
    name       = lower(p.name)
    glue       = p.glue
    presto     = p.presto
    quicksight = p.quicksight
  }]
  view_columns = concat(local.columns, local.partition_keys)

  bucket_arn      = "arn:${local.partition}:s3:::${var.bucket_name}"
  data_location   = "s3://${var.bucket_name}/${var.s3_prefix}"
  data_object_arn = "${local.bucket_arn}/${var.s3_prefix}account_id=*"

  projection_parameters = var.partition_projection.enabled ? {
    "projection.enabled"            = "true"
    "projection.account_id.type"    = "enum"
    "projection.account_id.values"  = join(",", var.partition_projection.account_ids)
    "projection.region.type"        = "enum"
    "projection.region.values"      = join(",", var.partition_projection.regions)
    "projection.year.type"          = "date"
    "projection.year.format"        = "yyyy"
    "projection.year.range"         = "${var.partition_projection.start_year},NOW"
    "projection.year.interval"      = "1"
    "projection.year.interval.unit" = "YEARS"
    "projection.month.type"         = "integer"
    "projection.month.range"        = "1,12"
    "projection.month.digits"       = "2"
    "storage.location.template"     = "${local.data_location}account_id=$${account_id}/region=$${region}/year=$${year}/month=$${month}/"
  } : {}

  view_sql = templatefile("${path.module}/templates/view.sql.tftpl", {
    database = var.database_name
    table    = var.table_name
    columns  = [for c in local.view_columns : c.name]
    months   = var.view_retention_months
  })

  # An Athena view is a Glue table of type VIRTUAL_VIEW whose original text
  # is the base64 of this JSON ("Presto view"); its columns use Presto types.
  presto_view = {
    originalSql = local.view_sql
    catalog     = "awsdatacatalog"
    schema      = var.database_name
    columns     = [for c in local.view_columns : { name = c.name, type = c.presto }]
  }
}

resource "aws_glue_catalog_database" "this" {
  name        = var.database_name
  description = "Kubecost allocation data exported by kubecost-s3-exporter."
  tags        = var.tags
}

module "table" {
  source = "../internal/parquet-table"

  name           = var.table_name
  database_name  = aws_glue_catalog_database.this.name
  description    = "Daily Kubecost allocations, one Parquet file per cluster and day (schema ${local.schema.schema_version})."
  location       = local.data_location
  columns        = [for c in local.columns : { name = c.name, type = c.glue }]
  partition_keys = [for p in local.partition_keys : { name = p.name, type = p.glue }]
  parameters = merge({
    "kubecost_s3_exporter.schema_version" = local.schema.schema_version
  }, local.projection_parameters)
}

moved {
  from = aws_glue_catalog_table.this
  to   = module.table.aws_glue_catalog_table.this
}

resource "aws_glue_catalog_table" "view" {
  name          = var.view_name
  database_name = aws_glue_catalog_database.this.name
  description   = "Kubecost allocations of the last ${var.view_retention_months} months and the current one."
  table_type    = "VIRTUAL_VIEW"

  parameters = {
    presto_view = "true"
    comment     = "Presto View"
  }

  view_original_text = "/* Presto View: ${base64encode(jsonencode(local.presto_view))} */"
  view_expanded_text = "/* Presto View */"

  storage_descriptor {
    dynamic "columns" {
      for_each = local.view_columns
      content {
        name = columns.value.name
        type = columns.value.glue
      }
    }
  }

  depends_on = [module.table]
}
