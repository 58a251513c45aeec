variable "aws_account_id" {
  description = "Account of the QuickSight subscription. Null means the provider's account."
  type        = string
  default     = null

  validation {
    condition     = var.aws_account_id == null || can(regex("^[0-9]{12}$", var.aws_account_id))
    error_message = "aws_account_id must be a 12-digit account ID."
  }
}

variable "principal_arns" {
  description = "QuickSight users or groups (arn:<partition>:quicksight:<identity region>:<account>:user/<namespace>/<name> or group/...) that own the data source, dataset and dashboard."
  type        = list(string)

  validation {
    condition     = length(var.principal_arns) > 0 && alltrue([for p in var.principal_arns : can(regex("^arn:[a-z-]+:quicksight:[a-z0-9-]+:[0-9]{12}:(user|group)/.+$", p))])
    error_message = "principal_arns must hold at least one QuickSight user or group ARN."
  }
}

variable "athena_workgroup_name" {
  description = "Athena workgroup the data source queries through (pipeline module athena_workgroup_name). QuickSight's service role needs access to the data and results buckets."
  type        = string

  validation {
    condition     = can(regex("^[a-zA-Z0-9._-]{1,128}$", var.athena_workgroup_name))
    error_message = "athena_workgroup_name must be an Athena workgroup name."
  }
}

variable "database_name" {
  description = "Glue database of the view (pipeline module database_name)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9_]{1,255}$", var.database_name))
    error_message = "database_name must be 1-255 lowercase letters, digits and underscores."
  }
}

variable "view_name" {
  description = "Athena view the dataset reads (pipeline module view_name)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9_]{1,255}$", var.view_name))
    error_message = "view_name must be 1-255 lowercase letters, digits and underscores."
  }
}

variable "view_columns" {
  description = "Columns of the view with their QuickSight types: pass the pipeline module's view_columns output unchanged."
  type = list(object({
    name       = string
    quicksight = string
  }))

  validation {
    condition     = length([for c in var.view_columns : c if c.quicksight != ""]) > 0 && alltrue([for c in var.view_columns : contains(["STRING", "INTEGER", "DECIMAL", "DATETIME", "BIT", "BOOLEAN", "JSON", ""], c.quicksight)])
    error_message = "view_columns must be a non-empty list of {name, quicksight} with QuickSight input column types (\"\" for columns QuickSight cannot read)."
  }
}

variable "data_source_id" {
  description = "QuickSight data source ID."
  type        = string
  default     = "kubecost-s3-exporter-athena"

  validation {
    condition     = can(regex("^[\\w-]{1,128}$", var.data_source_id))
    error_message = "data_source_id must be 1-128 letters, digits, underscores and hyphens."
  }
}

variable "data_source_name" {
  description = "QuickSight data source display name."
  type        = string
  default     = "kubecost-s3-exporter (Athena)"
}

variable "data_set_id" {
  description = "QuickSight dataset ID. The default matches the cid-cmd resources file (quicksight/cid)."
  type        = string
  default     = "kubecost_view"

  validation {
    condition     = can(regex("^[\\w-]{1,128}$", var.data_set_id))
    error_message = "data_set_id must be 1-128 letters, digits, underscores and hyphens."
  }
}

variable "data_set_name" {
  description = "QuickSight dataset display name."
  type        = string
  default     = "kubecost_view"
}

variable "create_refresh_schedule" {
  description = "Refresh the SPICE dataset daily."
  type        = bool
  default     = true
}

variable "refresh_time_of_day" {
  description = "Time of the daily full refresh, HH:MM in refresh_timezone. Run it after the crawler."
  type        = string
  default     = "04:00"

  validation {
    condition     = can(regex("^([01][0-9]|2[0-3]):[0-5][0-9]$", var.refresh_time_of_day))
    error_message = "refresh_time_of_day must be HH:MM (24-hour)."
  }
}

variable "refresh_timezone" {
  description = "Time zone of refresh_time_of_day (a Java time zone ID such as UTC or Europe/Paris)."
  type        = string
  default     = "UTC"
}

variable "definition_file" {
  description = "Dashboard definition (QuickSight API JSON). Null means this repository's quicksight/dashboard-definition.json."
  type        = string
  default     = null
}

variable "create_dashboard" {
  description = "Create the dashboard (through a CloudFormation stack, which takes the definition JSON as is)."
  type        = bool
  default     = true
}

variable "create_analysis" {
  description = "Also create an analysis from the same definition, to edit the sheets in the QuickSight console."
  type        = bool
  default     = false
}

variable "dashboard_id" {
  description = "QuickSight dashboard ID; the analysis uses <dashboard_id>-analysis."
  type        = string
  default     = "kubecost-s3-exporter"

  validation {
    condition     = can(regex("^[\\w-]{1,119}$", var.dashboard_id))
    error_message = "dashboard_id must be 1-119 letters, digits, underscores and hyphens."
  }
}

variable "dashboard_name" {
  description = "Dashboard (and analysis) display name."
  type        = string
  default     = "Kubecost cost allocation"
}

variable "stack_name_prefix" {
  description = "Prefix of the CloudFormation stack names (<prefix>-dashboard, <prefix>-analysis)."
  type        = string
  default     = "kubecost-s3-exporter-quicksight"

  validation {
    condition     = can(regex("^[a-zA-Z][-a-zA-Z0-9]{0,100}$", var.stack_name_prefix))
    error_message = "stack_name_prefix must start with a letter and hold only letters, digits and hyphens."
  }
}

variable "tags" {
  description = "Tags added to every taggable resource."
  type        = map(string)
  default     = {}
}

variable "bill_view" {
  description = "The bill module's namespace_daily view (database_name, view_name and its columns, e.g. { database_name = module.pipeline.database_name, view_name = module.bill.namespace_daily_view_name, columns = module.bill.view_columns.namespace_daily }): adds the Bill vs Kubecost dataset and dashboard. null leaves them out."
  type = object({
    database_name = string
    view_name     = string
    columns = list(object({
      name       = string
      quicksight = string
    }))
  })
  default = null
}

variable "bill_data_set_id" {
  description = "ID (and name) of the Bill vs Kubecost dataset."
  type        = string
  default     = "kubecost-bill-vs-kubecost"
}

variable "bill_dashboard_id" {
  description = "ID of the Bill vs Kubecost dashboard."
  type        = string
  default     = "kubecost-bill-vs-kubecost"
}

variable "bill_dashboard_name" {
  description = "Name of the Bill vs Kubecost dashboard."
  type        = string
  default     = "Bill vs Kubecost"
}
