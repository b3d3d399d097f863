# A helper module of the tests: what IAM itself answers, after an apply,
# for each user the tests name, so that an assertion is about the outcome
# (who may do what), not only about what the module sent.

terraform {
  required_providers {
    bkiam = {
      source = "bkiam/bkiam"
    }
  }
}

variable "system" {
  type    = string
  default = "bk_cmdb"
}

variable "resource_type" {
  type    = string
  default = "host"
}

variable "members" {
  type = list(string)
}

variable "actions" {
  type = set(string)
}

variable "instances" {
  type = map(string)
}

variable "users" {
  description = "The users to ask about: the members, and others who must not have gained anything."
  type        = list(string)
}

data "bkiam_access_check" "user" {
  for_each = toset(var.users)

  system    = var.system
  subject   = { type = "user", id = each.key }
  actions   = var.actions
  resources = [{ system = var.system, type = var.resource_type, id = sort(keys(var.instances))[0] }]
}

output "allowed" {
  value = { for user, check in data.bkiam_access_check.user : user => check.all_allowed }
}
