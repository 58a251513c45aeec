terraform {
  required_version = ">= 1.3.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Tested range: 5.40 and later 5.x, and 6.x; the lower bound is the
      # highest first version of what the module uses
      # (terraform/internal/providerfloor). The resources and data sources
      # used were checked against the provider's v6 upgrade guide
      # (docs/deployment.md, "AWS provider v6"); 7.0 is unknown.
      version = ">= 5.40.0, < 7.0.0"
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
