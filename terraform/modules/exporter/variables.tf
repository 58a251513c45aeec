variable "cluster_arn" {
  description = "EKS cluster ARN (CLUSTER_ID), arn:<partition>:eks:<region>:<account>:cluster/<name>. Its account, region and name fix the S3 keys this cluster may write."
  type        = string

  validation {
    condition     = can(regex("^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc):eks:([a-z]{2}(-gov|-iso[bef]?)?-[a-z]+|eusc-[a-z]{2}-[a-z]+)-[0-9]{1,2}:[0-9]{12}:cluster/[a-zA-Z0-9][a-zA-Z0-9_-]{0,99}$", var.cluster_arn))
    error_message = "cluster_arn must be an EKS cluster ARN, arn:<partition>:eks:<region>:<12-digit account>:cluster/<name>."
  }
}

variable "oidc_provider_arn" {
  description = "ARN of the cluster's IAM OIDC provider (in the cluster's account), arn:<partition>:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:iam::[0-9]{12}:oidc-provider/[^*?$]+$", var.oidc_provider_arn))
    error_message = "oidc_provider_arn must be an IAM OIDC provider ARN, arn:<partition>:iam::<account>:oidc-provider/<issuer host and path>."
  }
}

variable "service_account_namespace" {
  description = "Namespace of the exporter's Kubernetes service account (and of the Helm release)."
  type        = string
  default     = "kubecost-s3-exporter"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.service_account_namespace))
    error_message = "service_account_namespace must be a Kubernetes namespace name (DNS label)."
  }
}

variable "service_account_name" {
  description = "Name of the exporter's Kubernetes service account; the IRSA role trusts only this one."
  type        = string
  default     = "kubecost-s3-exporter"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.service_account_name))
    error_message = "service_account_name must be a Kubernetes object name (DNS subdomain)."
  }
}

variable "bucket_name" {
  description = "Bucket the exporter writes to (S3_BUCKET_NAME), in the account of the aws.pipeline provider."
  type        = string

  validation {
    condition = alltrue([
      can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name)),
      !can(regex("\\.\\.", var.bucket_name)),
      !can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+$", var.bucket_name)),
      !can(regex("^(xn--|sthree-|amzn-s3-demo-)", var.bucket_name)),
      !can(regex("(-s3alias|--ol-s3|\\.mrap|--x-s3|--table-s3)$", var.bucket_name)),
    ])
    error_message = "bucket_name must be a valid general-purpose S3 bucket name: 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit, not an IP address, without a reserved prefix or suffix."
  }
}

variable "s3_prefix" {
  description = "Key prefix before account_id= (S3_PREFIX), empty or ending with /. Wildcard characters (* ? $) are rejected because they would widen the IAM resources."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([A-Za-z0-9!_.'()=-]+/)*$", var.s3_prefix))
    error_message = "s3_prefix must be empty or path segments of A-Z a-z 0-9 ! _ . ' ( ) = - each ending with / (for example team-a/costs/)."
  }
}

variable "object_store_secret" {
  description = "Kubecost's bucket configuration (Thanos format) for the exporter to reuse: an existing Kubernetes Secret in service_account_namespace and its key, object-store.yaml (ETL backup, kubecostModel.etlBucketConfigSecret) or federated-store.yaml (Kubecost 3.x global.federatedStorage.existingSecret). The chart mounts it as OBJECT_STORE_CONFIG_FILE; its bucket and prefix must agree with bucket_name and s3_prefix. null: none."
  type = object({
    name = string
    key  = optional(string, "object-store.yaml")
  })
  default = null

  validation {
    condition = var.object_store_secret == null ? true : alltrue([
      can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.object_store_secret.name)),
      can(regex("^[-._a-zA-Z0-9]{1,253}$", var.object_store_secret.key)),
    ])
    error_message = "object_store_secret.name must be a Kubernetes Secret name (DNS subdomain) and key a Secret key (1-253 of - . _ a-z A-Z 0-9)."
  }
}

variable "codecs" {
  description = "Parquet codecs (file-name suffixes <day>_<cluster>.<codec>.parquet) the exporter may write. Keep all three to switch COMPRESSION freely."
  type        = list(string)
  default     = ["snappy", "zstd", "gzip"]

  validation {
    condition     = length(var.codecs) > 0 && alltrue([for c in var.codecs : contains(["snappy", "zstd", "gzip"], c)])
    error_message = "codecs must be a non-empty subset of snappy, zstd and gzip."
  }
}

variable "kms_key_arns" {
  description = "KMS keys the writer may use: the bucket's SSE-KMS key (S3_SSE_KMS_KEY_ID) and the key of a secret in secret_arns."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for k in var.kms_key_arns : can(regex("^arn:[a-z-]+:kms:[a-z0-9-]+:[0-9]{12}:key/.+$", k))])
    error_message = "kms_key_arns must be KMS key ARNs."
  }
}

variable "secret_arns" {
  description = "Secrets Manager secrets the writer may read: the Kubecost CA bundle (pipeline module kubecost_ca_secret_arn) and a bearer token secret."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for s in var.secret_arns : can(regex("^arn:[a-z-]+:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", s))])
    error_message = "secret_arns must be Secrets Manager secret ARNs."
  }
}

variable "role_name" {
  description = "Name of the IRSA role and, for a cross-account cluster, of the parent role. Null derives kubecost-s3-exporter-<cluster>-<hash of the cluster ARN>, unique per cluster."
  type        = string
  default     = null

  validation {
    condition     = var.role_name == null || can(regex("^[\\w+=,.@-]{1,64}$", var.role_name))
    error_message = "role_name must be 1-64 characters of letters, digits and + = , . @ _ -."
  }
}

variable "role_path" {
  description = "Path of the IAM roles."
  type        = string
  default     = "/"

  validation {
    condition     = can(regex("^/([\\x21-\\x7e]*/)?$", var.role_path))
    error_message = "role_path must start and end with /."
  }
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary of the IAM roles, or null."
  type        = string
  default     = null
}

variable "create_helm_release" {
  description = "Install the chart with helm_release, with the values this module computes (helm_values output) merged with helm_values."
  type        = bool
  default     = false
}

variable "helm_chart" {
  description = "Chart name in helm_repository (null: kubecost-s3-exporter, the published chart), or a local chart path when helm_repository is null (null: this repository's chart/)."
  type        = string
  default     = null
}

variable "helm_repository" {
  description = "Chart repository: the release's OCI repository by default; another oci:// or https:// URL (a private mirror), or null to install helm_chart from a local path."
  type        = string
  default     = "oci://ghcr.io/kubecost-s3-exporter/charts"
}

variable "helm_chart_version" {
  description = "Chart version to install from helm_repository (a release tag without its v, for example 1.2.0). Pin it: null installs the newest. Ignored for a local chart."
  type        = string
  default     = null
}

variable "image_repository" {
  description = "Exporter image repository (chart value image.repository): the release's GHCR image by default, or a private mirror such as an ECR repository."
  type        = string
  default     = "ghcr.io/kubecost-s3-exporter/kubecost-s3-exporter"
}

variable "image_version" {
  description = "Exporter image tag (chart value image.tag), or null for the chart's appVersion, the image released with the chart."
  type        = string
  default     = null
}

variable "helm_release_name" {
  description = "Helm release name."
  type        = string
  default     = "kubecost-s3-exporter"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$", var.helm_release_name))
    error_message = "helm_release_name must be at most 53 lowercase letters, digits and hyphens."
  }
}

variable "helm_create_namespace" {
  description = "Create service_account_namespace if it does not exist."
  type        = bool
  default     = true
}

variable "helm_timeout" {
  description = "Seconds Helm waits for the release. The install-time export Job runs in the background and is not waited for."
  type        = number
  default     = 1200

  validation {
    condition     = var.helm_timeout >= 60
    error_message = "helm_timeout must be at least 60 seconds."
  }
}

variable "helm_values" {
  description = "Extra chart values, merged over the computed ones (for example exporter.kubecostApiEndpoint, cronJob.schedule or exporter.caCertificateSecretName)."
  type        = any
  default     = {}
}

variable "labels" {
  description = "Kubernetes label keys to export (exporter.labels, LABELS). Keep it equal to the pipeline module's labels."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for k in var.labels : can(regex("^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", k))])
    error_message = "Each label must be a Kubernetes label key, [prefix/]name."
  }
}

variable "annotations" {
  description = "Kubernetes annotation keys to export (exporter.annotations, ANNOTATIONS). Keep it equal to the pipeline module's annotations."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for k in var.annotations : can(regex("^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", k))])
    error_message = "Each annotation must be a Kubernetes annotation key, [prefix/]name."
  }
}

variable "tags" {
  description = "Tags added to the IAM roles."
  type        = map(string)
  default     = {}
}

variable "federated_clusters" {
  description = "Federated Kubecost (Kubecost 2.x Federated ETL or Aggregator): the clusters that one exporter on the primary (cluster_arn) exports, each as { id = Kubecost's cluster id (properties.cluster), arn = its EKS cluster ARN }. The role may write each cluster's own files under its own account/region prefix and nothing else. Empty: cluster_arn alone."
  type = list(object({
    id  = string
    arn = string
  }))
  default = []

  validation {
    condition     = alltrue([for c in var.federated_clusters : can(regex("^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc):eks:([a-z]{2}(-gov|-iso[bef]?)?-[a-z]+|eusc-[a-z]{2}-[a-z]+)-[0-9]{1,2}:[0-9]{12}:cluster/[a-zA-Z0-9][a-zA-Z0-9_-]{0,99}$", c.arn))])
    error_message = "Every federated_clusters[*].arn must be an EKS cluster ARN, arn:<partition>:eks:<region>:<account>:cluster/<name>."
  }
  validation {
    # Sent quoted in filter=cluster:"<id>": no quote, backslash, comma, =, * or control character.
    condition     = alltrue([for c in var.federated_clusters : can(regex("^[^\"\\\\,=*\\x00-\\x1f\\x7f]{1,253}$", c.id))])
    error_message = "Every federated_clusters[*].id must be 1-253 characters without \" \\ , = * or control characters."
  }
  validation {
    condition     = length(distinct([for c in var.federated_clusters : c.id])) == length(var.federated_clusters) && length(distinct([for c in var.federated_clusters : c.arn])) == length(var.federated_clusters)
    error_message = "federated_clusters lists an id or an ARN twice."
  }
}

variable "kubecost_api_endpoint" {
  description = "Kubecost base URL (exporter.kubecostApiEndpoint, KUBECOST_API_ENDPOINT), used as it is. Empty: the exporter finds Kubecost, trying http://<release>-frontend.<namespace>:9090 (Kubecost 3.x), then http://<release>-cost-analyzer.<namespace>:9090 (1.x/2.x), with kubecost_namespace and kubecost_release."
  type        = string
  default     = ""

  validation {
    condition     = var.kubecost_api_endpoint == "" || can(regex("^https?://[^/?#\\s@]+(/[^?#\\s]*)?$", var.kubecost_api_endpoint))
    error_message = "kubecost_api_endpoint must be empty (discovery) or http(s)://<host>[:port][/path] without query or fragment."
  }
}

variable "kubecost_namespace" {
  description = "With kubecost_api_endpoint empty: the namespace Kubecost is installed in (exporter.kubecostNamespace, KUBECOST_NAMESPACE)."
  type        = string
  default     = "kubecost"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.kubecost_namespace))
    error_message = "kubecost_namespace must be a Kubernetes namespace name (DNS label)."
  }
}

variable "kubecost_release" {
  description = "With kubecost_api_endpoint empty: Kubecost's Helm release name (exporter.kubecostRelease, KUBECOST_RELEASE)."
  type        = string
  default     = "kubecost"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$", var.kubecost_release))
    error_message = "kubecost_release must be a Helm release name: at most 53 lowercase letters, digits and hyphens."
  }
}
