# The same assertion as a gate for a pipeline: a failed postcondition
# fails the plan (exit code 1), where a failed check block only warns.

locals {
  system = "bk_cmdb"
  team   = ["alice", "bob", "carol"]
  hosts  = ["1", "2"]
}

data "bkiam_access_check" "view" {
  for_each = { for pair in setproduct(local.team, local.hosts) : "${pair[0]} on host ${pair[1]}" => pair }

  system    = local.system
  subject   = { type = "user", id = each.value[0] }
  actions   = ["view_host"]
  resources = [{ system = local.system, type = "host", id = each.value[1] }]

  lifecycle {
    postcondition {
      condition     = self.all_allowed
      error_message = "Not allowed to view: ${each.key}."
    }
  }
}
