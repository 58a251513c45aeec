data "aws_caller_identity" "current" {}

locals {
  account_id = coalesce(var.aws_account_id, data.aws_caller_identity.current.account_id)

  data_source_actions = [
    "quicksight:DescribeDataSource",
    "quicksight:DescribeDataSourcePermissions",
    "quicksight:PassDataSource",
    "quicksight:UpdateDataSource",
    "quicksight:DeleteDataSource",
    "quicksight:UpdateDataSourcePermissions",
  ]
  data_set_actions = [
    "quicksight:DescribeDataSet",
    "quicksight:DescribeDataSetPermissions",
    "quicksight:PassDataSet",
    "quicksight:DescribeIngestion",
    "quicksight:ListIngestions",
    "quicksight:UpdateDataSet",
    "quicksight:DeleteDataSet",
    "quicksight:CreateIngestion",
    "quicksight:CancelIngestion",
    "quicksight:UpdateDataSetPermissions",
  ]
}

resource "aws_quicksight_data_source" "athena" {
  aws_account_id = local.account_id
  data_source_id = var.data_source_id
  name           = var.data_source_name
  type           = "ATHENA"

  parameters {
    athena {
      work_group = var.athena_workgroup_name
    }
  }

  ssl_properties {
    disable_ssl = false
  }

  dynamic "permission" {
    for_each = toset(var.principal_arns)
    content {
      principal = permission.value
      actions   = local.data_source_actions
    }
  }

  tags = var.tags
}

# A SPICE dataset over the whole view: its input columns are the view's,
# in the view's order (a Go test checks they are equal).
resource "aws_quicksight_data_set" "this" {
  aws_account_id = local.account_id
  data_set_id    = var.data_set_id
  name           = var.data_set_name
  import_mode    = "SPICE"

  physical_table_map {
    physical_table_map_id = "kubecost-view"

    relational_table {
      data_source_arn = aws_quicksight_data_source.athena.arn
      catalog         = "AwsDataCatalog"
      schema          = var.database_name
      name            = var.view_name

      # Maps, lists and structs (quicksight "") cannot be read by
      # QuickSight; they stay in the view for Athena.
      dynamic "input_columns" {
        for_each = [for c in var.view_columns : c if c.quicksight != ""]
        content {
          name = input_columns.value.name
          type = input_columns.value.quicksight
        }
      }
    }
  }

  logical_table_map {
    logical_table_map_id = "kubecost-view"
    alias                = var.view_name

    source {
      physical_table_id = "kubecost-view"
    }
  }

  dynamic "permissions" {
    for_each = toset(var.principal_arns)
    content {
      principal = permissions.value
      actions   = local.data_set_actions
    }
  }

  tags = var.tags
}

resource "aws_quicksight_refresh_schedule" "daily" {
  count = var.create_refresh_schedule ? 1 : 0

  aws_account_id = local.account_id
  data_set_id    = aws_quicksight_data_set.this.data_set_id
  schedule_id    = "${var.data_set_id}-daily"

  schedule {
    refresh_type = "FULL_REFRESH"

    schedule_frequency {
      interval        = "DAILY"
      time_of_the_day = var.refresh_time_of_day
      timezone        = var.refresh_timezone
    }
  }
}
