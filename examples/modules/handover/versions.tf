terraform {
  required_version = ">= 1.5"

  required_providers {
    bkiam = {
      source = "bkiam/bkiam"
    }
  }
}
