# tflint configuration for every module and example under terraform/.
# Only the ruleset bundled with tflint is used, so `tflint --recursive`
# needs no plugin download (run it from terraform/ with
# --config "$PWD/.tflint.hcl"; `make lint-terraform` does).

config {
  # Evaluate calls of local modules (examples -> ../../modules/*).
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "recommended"
}

# Beyond the recommended preset: the terraform-aws-modules conventions.
rule "terraform_documented_variables" {
  enabled = true
}

rule "terraform_documented_outputs" {
  enabled = true
}

rule "terraform_naming_convention" {
  enabled = true
}

rule "terraform_standard_module_structure" {
  enabled = true
}

rule "terraform_comment_syntax" {
  enabled = true
}

rule "terraform_unused_required_providers" {
  enabled = true
}
