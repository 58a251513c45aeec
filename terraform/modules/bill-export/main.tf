data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.id

  # columns.json is generated (`make generate`) from the CUR 2.0 column
  # table of exporter/bill: the columns the bill views and the report read,
  # named and typed as AWS's data dictionary has them
  # (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2.html).
  columns = jsondecode(file("${path.module}/columns.json")).columns

  bucket_name = module.bucket.id
  bucket_arn  = "arn:${local.partition}:s3:::${var.bucket_name}"

  # A Data Export writes <prefix>/<export-name>/data/BILLING_PERIOD=YYYY-MM/
  # (https://docs.aws.amazon.com/cur/latest/userguide/dataexports-export-delivery.html).
  data_prefix   = "${var.s3_prefix}/${var.export_name}/data/"
  data_location = "s3://${var.bucket_name}/${local.data_prefix}"

  query = "SELECT ${join(", ", [for c in local.columns : c.name])} FROM COST_AND_USAGE_REPORT"
}

# The export: CUR 2.0 with split cost allocation data, Parquet, each
# billing period's files overwritten as AWS refines them
# (https://docs.aws.amazon.com/cur/latest/userguide/dataexports-create-standard.html).
resource "aws_bcmdataexports_export" "this" {
  provider = aws.us_east_1

  export {
    name        = var.export_name
    description = "CUR 2.0 with split cost allocation data for kubecost-s3-exporter's bill views."

    data_query {
      query_statement = local.query
      table_configurations = {
        COST_AND_USAGE_REPORT = {
          TIME_GRANULARITY                      = var.time_granularity
          INCLUDE_RESOURCES                     = "TRUE"
          INCLUDE_SPLIT_COST_ALLOCATION_DATA    = "TRUE"
          INCLUDE_MANUAL_DISCOUNT_COMPATIBILITY = "FALSE"
        }
      }
    }

    destination_configurations {
      s3_destination {
        s3_bucket = local.bucket_name
        s3_prefix = var.s3_prefix
        s3_region = local.region

        s3_output_configurations {
          overwrite   = "OVERWRITE_REPORT"
          format      = "PARQUET"
          compression = "PARQUET"
          output_type = "CUSTOM"
        }
      }
    }

    refresh_cadence {
      frequency = "SYNCHRONOUS"
    }
  }

  tags = var.tags

  depends_on = [module.bucket]
}

resource "aws_glue_catalog_database" "this" {
  count = var.create_database ? 1 : 0

  name        = var.database_name
  description = "CUR 2.0 with split cost allocation data (Data Export ${var.export_name})."
  tags        = var.tags
}

# The export's table. Partition projection computes the BILLING_PERIOD
# partitions, so no crawler is needed.
module "table" {
  source = "../internal/parquet-table"

  name           = var.table_name
  database_name  = var.create_database ? aws_glue_catalog_database.this[0].name : var.database_name
  description    = "CUR 2.0 with split cost allocation data, written by the Data Export ${var.export_name}."
  location       = local.data_location
  columns        = [for c in local.columns : { name = c.name, type = c.glue }]
  partition_keys = [{ name = "billing_period", type = "string" }]
  parameters = {
    "projection.enabled"                      = "true"
    "projection.billing_period.type"          = "date"
    "projection.billing_period.format"        = "yyyy-MM"
    "projection.billing_period.range"         = "${var.first_billing_period},NOW"
    "projection.billing_period.interval"      = "1"
    "projection.billing_period.interval.unit" = "MONTHS"
    "storage.location.template"               = "${local.data_location}BILLING_PERIOD=$${billing_period}/"
  }
}

moved {
  from = aws_glue_catalog_table.this
  to   = module.table.aws_glue_catalog_table.this
}
