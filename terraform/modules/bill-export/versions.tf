terraform {
  required_version = ">= 1.3.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 5.47.0 is the first release with aws_bcmdataexports_export; the
      # lower bound is the highest first version of what the module uses
      # (terraform/internal/providerfloor). The resources and data sources
      # were checked against the provider's v6 upgrade guide
      # (docs/deployment.md, "AWS provider v6"); 7.0 is unknown.
      version = ">= 5.47.0, < 7.0.0"
      # The Data Exports API is served from us-east-1 only
      # (https://docs.aws.amazon.com/general/latest/gr/billing.html):
      # aws.us_east_1 creates the export, aws the bucket and Glue table.
      configuration_aliases = [aws.us_east_1]
    }
  }
}
