variable "pipeline_region" {
  description = "Region of the bucket, Glue, Athena and QuickSight resources, in the pipeline account (the account of the default credentials)."
  type        = string
}

variable "cluster_region" {
  description = "Region of the EKS cluster."
  type        = string
}

variable "cluster_account_role_arn" {
  description = "Role in the cluster's account that Terraform assumes to create the IRSA role and read the cluster (and that can reach the cluster's API for Helm)."
  type        = string
}

variable "cluster_name" {
  description = "Name of the EKS cluster, in the cluster account."
  type        = string
}

variable "bucket_name" {
  description = "Name of the bucket to create in the pipeline account. Avoid account IDs and region codes in it."
  type        = string
}

variable "s3_prefix" {
  description = "Key prefix before account_id= (S3_PREFIX), empty or ending with /."
  type        = string
  default     = ""
}

variable "labels" {
  description = "Kubernetes label keys to export as columns (LABELS)."
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

variable "quicksight_principal_arns" {
  description = "QuickSight users or groups (in the pipeline account) that own the data source, dataset and dashboard."
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
