# The Bill vs Kubecost dataset and dashboard (issue 43), when bill_view is
# given: a SPICE dataset over the bill module's namespace_daily view and a
# one-sheet dashboard from quicksight/bill-definition.json, deployed through
# CloudFormation like the main dashboard. It is a dashboard of its own:
# the main definition is near CloudFormation's 51,200-byte template limit.

locals {
  bill            = var.bill_view != null
  bill_definition = jsondecode(file("${path.module}/../../../quicksight/bill-definition.json"))
  bill_definition_with_arn = local.bill ? merge(local.bill_definition, {
    DataSetIdentifierDeclarations = [{
      Identifier = local.bill_definition.DataSetIdentifierDeclarations[0].Identifier
      DataSetArn = aws_quicksight_data_set.bill[0].arn
    }]
  }) : local.bill_definition

  bill_dashboard_template = jsonencode({
    AWSTemplateFormatVersion = "2010-09-09"
    Description              = "kubecost-s3-exporter Bill vs Kubecost QuickSight dashboard (managed by Terraform)."
    Resources = {
      Dashboard = {
        Type = "AWS::QuickSight::Dashboard"
        Properties = {
          AwsAccountId = local.account_id
          DashboardId  = var.bill_dashboard_id
          Name         = var.bill_dashboard_name
          Definition   = local.bill_definition_with_arn
          Permissions  = [for p in var.principal_arns : { Principal = p, Actions = local.dashboard_actions }]
          DashboardPublishOptions = {
            AdHocFilteringOption = { AvailabilityStatus = "ENABLED" }
            ExportToCSVOption    = { AvailabilityStatus = "ENABLED" }
            SheetControlsOption  = { VisibilityState = "EXPANDED" }
          }
        }
      }
    }
    Outputs = {
      Arn = { Value = { "Fn::GetAtt" = ["Dashboard", "Arn"] } }
    }
  })
}

resource "aws_quicksight_data_set" "bill" {
  count = local.bill ? 1 : 0

  aws_account_id = local.account_id
  data_set_id    = var.bill_data_set_id
  name           = var.bill_data_set_id
  import_mode    = "SPICE"

  physical_table_map {
    physical_table_map_id = "bill-namespace-daily"

    relational_table {
      data_source_arn = aws_quicksight_data_source.athena.arn
      catalog         = "AwsDataCatalog"
      schema          = var.bill_view.database_name
      name            = var.bill_view.view_name

      dynamic "input_columns" {
        for_each = [for c in var.bill_view.columns : c if c.quicksight != ""]
        content {
          name = input_columns.value.name
          type = input_columns.value.quicksight
        }
      }
    }
  }

  logical_table_map {
    logical_table_map_id = "bill-namespace-daily"
    alias                = var.bill_view.view_name

    source {
      physical_table_id = "bill-namespace-daily"
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

resource "aws_quicksight_refresh_schedule" "bill_daily" {
  count = local.bill && var.create_refresh_schedule ? 1 : 0

  aws_account_id = local.account_id
  data_set_id    = aws_quicksight_data_set.bill[0].data_set_id
  schedule_id    = "${var.bill_data_set_id}-daily"

  schedule {
    refresh_type = "FULL_REFRESH"

    schedule_frequency {
      interval        = "DAILY"
      time_of_the_day = var.refresh_time_of_day
      timezone        = var.refresh_timezone
    }
  }
}

resource "aws_cloudformation_stack" "bill_dashboard" {
  count = local.bill && var.create_dashboard ? 1 : 0

  name          = "${var.stack_name_prefix}-bill-dashboard"
  template_body = local.bill_dashboard_template
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = length(local.bill_dashboard_template) <= 51200
      error_message = "The Bill vs Kubecost dashboard template exceeds CloudFormation's 51,200-byte template body limit."
    }
  }
}
