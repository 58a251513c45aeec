terraform {
  required_version = ">= 1.3.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # The lower bound is the first provider version that has every
      # resource and argument used here (terraform/internal/providerfloor).
      version = ">= 5.40.0, < 7.0.0"
    }
  }
}
