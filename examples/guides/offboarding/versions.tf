# The provider's address: without it Terraform looks for hashicorp/bkiam.
# The provider itself is configured through the environment
# (BKIAM_APIGW_URL, BKIAM_APP_CODE, BKIAM_APP_SECRET).
terraform {
  required_version = ">= 1.5"

  required_providers {
    bkiam = {
      source = "bkiam/bkiam"
    }
  }
}
