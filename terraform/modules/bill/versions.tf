terraform {
  required_version = ">= 1.3.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # The lower bound is the first release with every resource, argument
      # and attribute the module uses (terraform/internal/providerfloor,
      # from the provider's CHANGELOG); the repository's checks run no
      # release that old (a fresh init takes the newest in range). The
      # resources and data sources used were checked against the
      # provider's v6 upgrade guide (docs/deployment.md, "AWS provider
      # v6"); 7.0 is unknown.
      version = ">= 4.50.0, < 7.0.0"
    }
  }
}
