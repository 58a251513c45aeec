variable "create" {
  description = "Create the bucket and its public access block, ownership, encryption and lifecycle settings. False: the bucket exists; only its policy is attached, when attach_policy is true."
  type        = bool
  default     = true
}

variable "name" {
  description = "Bucket name. Null with create: S3 names the bucket from name_prefix."
  type        = string
  default     = null
}

variable "name_prefix" {
  description = "Prefix of a bucket name S3 completes, used when name is null."
  type        = string
  default     = null
}

variable "force_destroy" {
  description = "Let terraform destroy delete the bucket with its objects."
  type        = bool
  default     = false
}

variable "kms_key_arn" {
  description = "KMS key of the default encryption (SSE-KMS, with an S3 Bucket Key). Null: SSE-S3 (AES256)."
  type        = string
  default     = null
}

variable "policy_documents" {
  description = "IAM policy documents (JSON) merged into the bucket policy, after the statement that denies requests without TLS. Their statements need distinct sids."
  type        = list(string)
  default     = []
}

variable "attach_policy" {
  description = "Attach the bucket policy to an existing bucket (create = false). A created bucket always gets it."
  type        = bool
  default     = false
}

variable "lifecycle_rule" {
  description = "The bucket's lifecycle rule: its id, an optional key prefix it applies to, and an optional expiration in days. It always aborts multipart uploads left incomplete for a day."
  type = object({
    id              = optional(string, "abort-incomplete-uploads")
    prefix          = optional(string)
    expiration_days = optional(number)
  })
  default  = {}
  nullable = false
}

variable "tags" {
  description = "Tags of the bucket."
  type        = map(string)
  default     = {}
}
