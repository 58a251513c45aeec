variable "region" {
  description = "Region of the EKS cluster, the bucket, Glue, Athena and QuickSight resources."
  type        = string
}

variable "cluster_name" {
  description = "Name of the EKS cluster that runs Kubecost and the exporter."
  type        = string
}

variable "bucket_name" {
  description = "Name of the bucket to create for the exporter's Parquet files. Avoid account IDs and region codes in it."
  type        = string
}

variable "labels" {
  description = "Kubernetes label keys to export as columns (LABELS), e.g. [\"app\", \"team\"]."
  type        = list(string)
  default     = []
}

variable "annotations" {
  description = "Kubernetes annotation keys to export as columns (ANNOTATIONS)."
  type        = list(string)
  default     = []
}

variable "install_helm_release" {
  description = "Install the exporter's chart in the cluster with Terraform. Set false to run helm install yourself with the exporter_helm_values output."
  type        = bool
  default     = true
}

variable "exporter_schedule" {
  description = "Cron schedule of the exporter (UTC): before the crawler (02:00) and the QuickSight refresh (04:00)."
  type        = string
  default     = "0 0 * * *"
}

variable "quicksight_principal_arns" {
  description = "QuickSight users or groups that own the data source, dataset and dashboard."
  type        = list(string)
}

variable "tags" {
  description = "Tags added to every taggable resource."
  type        = map(string)
  default     = {}
}

variable "cur" {
  description = "An existing CUR 2.0 table with split cost allocation data (e.g. the Cloud Intelligence Dashboards' one) and where its files are: adds the bill views and the Bill vs Kubecost dashboard. null leaves them out."
  type = object({
    database_name = string
    table_name    = string
    bucket_name   = string
    s3_prefix     = string
  })
  default = null
}
