# The Bill vs Kubecost stack (issue 43), when bill_view is given: a SPICE
# dataset over the bill module's namespace_daily view and a one-sheet
# dashboard from quicksight/bill-definition.json (the "bill" entry of
# local.stacks). It is a dashboard of its own: the main definition is near
# CloudFormation's 51,200-byte template limit.

locals {
  bill            = var.bill_view != null
  bill_definition = jsondecode(file("${path.module}/../../../quicksight/bill-definition.json"))
}
