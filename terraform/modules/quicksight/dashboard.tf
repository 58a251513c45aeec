# The dashboard definition is QuickSight API JSON (quicksight/
# dashboard-definition.json, as `aws quicksight describe-dashboard-definition`
# prints it). CloudFormation's AWS::QuickSight::Dashboard takes that JSON as
# is, so it is deployed through a stack instead of translating it into the
# aws_quicksight_dashboard block syntax.
#
# The label sheet depends on the configured labels. The JSON holds three
# placeholders, each a whole JSON string, that are replaced here (and by the
# Go function quicksight.Render, which a test compares with this):
#   "__LABEL_VALUE_EXPRESSION__"  the label_value calculated field
#   "__LABEL_KEYS__"              the label choices of the LabelKey control
#   "__DEFAULT_LABEL_KEY__"       the LabelKey parameter's default

locals {
  definition_file = coalesce(var.definition_file, "${path.module}/../../../quicksight/dashboard-definition.json")

  label_prefix  = "properties.labels."
  label_keys    = [for c in var.view_columns : trimprefix(c.name, local.label_prefix) if startswith(c.name, local.label_prefix)]
  label_choices = length(local.label_keys) > 0 ? local.label_keys : ["(none)"]
  label_expression = length(local.label_keys) > 0 ? format("ifelse(%s, '')", join(", ", [
    for k in local.label_keys : "$${LabelKey} = '${k}', {${local.label_prefix}${k}}"
  ])) : "toString('')"

  definition_text = replace(replace(replace(file(local.definition_file),
    "\"__LABEL_VALUE_EXPRESSION__\"", jsonencode(local.label_expression)),
    "\"__LABEL_KEYS__\"", join(", ", [for k in local.label_choices : jsonencode(k)])),
  "\"__DEFAULT_LABEL_KEY__\"", jsonencode(local.label_choices[0]))

  definition_raw = jsondecode(local.definition_text)

  # Each stack's definition, its dataset declared by the dataset's ARN.
  definitions = merge({ kubecost = local.definition_raw }, local.bill ? { bill = local.bill_definition } : {})
  definitions_with_arn = { for k, d in local.definitions : k => merge(d, {
    DataSetIdentifierDeclarations = [{
      Identifier = d.DataSetIdentifierDeclarations[0].Identifier
      DataSetArn = aws_quicksight_data_set.this[k].arn
    }]
  }) }

  dashboard_actions = [
    "quicksight:DescribeDashboard",
    "quicksight:ListDashboardVersions",
    "quicksight:UpdateDashboardPermissions",
    "quicksight:QueryDashboard",
    "quicksight:UpdateDashboard",
    "quicksight:DeleteDashboard",
    "quicksight:DescribeDashboardPermissions",
    "quicksight:UpdateDashboardPublishedVersion",
  ]
  analysis_actions = [
    "quicksight:RestoreAnalysis",
    "quicksight:UpdateAnalysisPermissions",
    "quicksight:DeleteAnalysis",
    "quicksight:DescribeAnalysisPermissions",
    "quicksight:QueryAnalysis",
    "quicksight:DescribeAnalysis",
    "quicksight:UpdateAnalysis",
  ]

  dashboard_templates = { for k, st in local.stacks : k => jsonencode({
    AWSTemplateFormatVersion = "2010-09-09"
    Description              = st.description
    Resources = {
      Dashboard = {
        Type = "AWS::QuickSight::Dashboard"
        Properties = {
          AwsAccountId = local.account_id
          DashboardId  = st.dashboard_id
          Name         = st.dashboard_name
          Definition   = local.definitions_with_arn[k]
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
  }) }

  analysis_template = jsonencode({
    AWSTemplateFormatVersion = "2010-09-09"
    Description              = "kubecost-s3-exporter QuickSight analysis (managed by Terraform)."
    Resources = {
      Analysis = {
        Type = "AWS::QuickSight::Analysis"
        Properties = {
          AwsAccountId = local.account_id
          AnalysisId   = "${var.dashboard_id}-analysis"
          Name         = var.dashboard_name
          Definition   = local.definitions_with_arn.kubecost
          Permissions  = [for p in var.principal_arns : { Principal = p, Actions = local.analysis_actions }]
        }
      }
    }
    Outputs = {
      Arn = { Value = { "Fn::GetAtt" = ["Analysis", "Arn"] } }
    }
  })
}

resource "aws_cloudformation_stack" "analysis" {
  count = var.create_analysis ? 1 : 0

  name          = "${var.stack_name_prefix}-analysis"
  template_body = local.analysis_template
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = length(local.analysis_template) <= 51200
      error_message = "The analysis template exceeds CloudFormation's 51,200-byte template body limit; shorten the definition or the label list."
    }
  }
}
