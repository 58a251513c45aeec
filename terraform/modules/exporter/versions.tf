terraform {
  required_version = ">= 1.3.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40.0"
      # aws: the cluster's account (IRSA role). aws.pipeline: the account of
      # the bucket (parent role when it differs). Pass the same provider
      # twice for a single-account setup.
      configuration_aliases = [aws.pipeline]
    }
    helm = {
      source  = "hashicorp/helm"
      version = ">= 2.9.0"
    }
  }
}
