data "aws_caller_identity" "current" {}

locals {
  account_id = coalesce(var.aws_account_id, data.aws_caller_identity.current.account_id)

  # The dataset-and-dashboard stacks, by key; definitions holds each one's
  # dashboard definition (dashboard.tf, bill.tf).
  stacks = merge({
    kubecost = {
      data_set_id    = var.data_set_id
      data_set_name  = var.data_set_name
      table_id       = "kubecost-view"
      database_name  = var.database_name
      view_name      = var.view_name
      columns        = var.view_columns
      dashboard_id   = var.dashboard_id
      dashboard_name = var.dashboard_name
      stack_name     = "${var.stack_name_prefix}-dashboard"
      description    = "kubecost-s3-exporter QuickSight dashboard (managed by Terraform)."
    }
    }, local.bill ? {
    bill = {
      data_set_id    = var.bill_data_set_id
      data_set_name  = var.bill_data_set_id
      table_id       = "bill-namespace-daily"
      database_name  = var.bill_view.database_name
      view_name      = var.bill_view.view_name
      columns        = var.bill_view.columns
      dashboard_id   = var.bill_dashboard_id
      dashboard_name = var.bill_dashboard_name
      stack_name     = "${var.stack_name_prefix}-bill-dashboard"
      description    = "kubecost-s3-exporter Bill vs Kubecost QuickSight dashboard (managed by Terraform)."
    }
  } : {})

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

# One SPICE dataset, refresh schedule and dashboard per stack: the
# allocations over the pipeline's view, and Bill vs Kubecost over the bill
# module's namespace_daily view when bill_view is given (bill.tf). Each
# dataset's input columns are its view's, in the view's order (a Go test
# checks they are equal).
resource "aws_quicksight_data_set" "this" {
  for_each = local.stacks

  aws_account_id = local.account_id
  data_set_id    = each.value.data_set_id
  name           = each.value.data_set_name
  import_mode    = "SPICE"

  physical_table_map {
    physical_table_map_id = each.value.table_id

    relational_table {
      data_source_arn = aws_quicksight_data_source.athena.arn
      catalog         = "AwsDataCatalog"
      schema          = each.value.database_name
      name            = each.value.view_name

      # Maps, lists and structs (quicksight "") cannot be read by
      # QuickSight; they stay in the view for Athena.
      dynamic "input_columns" {
        for_each = [for c in each.value.columns : c if c.quicksight != ""]
        content {
          name = input_columns.value.name
          type = input_columns.value.quicksight
        }
      }
    }
  }

  logical_table_map {
    logical_table_map_id = each.value.table_id
    alias                = each.value.view_name

    source {
      physical_table_id = each.value.table_id
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
  for_each = var.create_refresh_schedule ? local.stacks : {}

  aws_account_id = local.account_id
  data_set_id    = aws_quicksight_data_set.this[each.key].data_set_id
  schedule_id    = "${each.value.data_set_id}-daily"

  schedule {
    refresh_type = "FULL_REFRESH"

    schedule_frequency {
      interval        = "DAILY"
      time_of_the_day = var.refresh_time_of_day
      timezone        = var.refresh_timezone
    }
  }
}

resource "aws_cloudformation_stack" "dashboard" {
  for_each = var.create_dashboard ? local.stacks : {}

  name          = each.value.stack_name
  template_body = local.dashboard_templates[each.key]
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = length(local.dashboard_templates[each.key]) <= 51200
      error_message = "The ${each.value.dashboard_name} dashboard template exceeds CloudFormation's 51,200-byte template body limit; shorten the definition or the label list."
    }
  }
}

# The stacks were two hand-written copies, one counted; their state moves.
moved {
  from = aws_quicksight_data_set.this
  to   = aws_quicksight_data_set.this["kubecost"]
}

moved {
  from = aws_quicksight_data_set.bill[0]
  to   = aws_quicksight_data_set.this["bill"]
}

moved {
  from = aws_quicksight_refresh_schedule.daily[0]
  to   = aws_quicksight_refresh_schedule.daily["kubecost"]
}

moved {
  from = aws_quicksight_refresh_schedule.bill_daily[0]
  to   = aws_quicksight_refresh_schedule.daily["bill"]
}

moved {
  from = aws_cloudformation_stack.dashboard[0]
  to   = aws_cloudformation_stack.dashboard["kubecost"]
}

moved {
  from = aws_cloudformation_stack.bill_dashboard[0]
  to   = aws_cloudformation_stack.dashboard["bill"]
}
