# The same assertion as a gate for a pipeline: a failed postcondition
# fails the plan (exit code 1), where a failed check block only warns.

locals {
  system = "bk_cmdb"
  team   = ["alice", "bob", "carol"]
  hosts = {
    "1" = ["/biz,1/"]
    "2" = ["/biz,1/"]
  }
  pairs = { for pair in setproduct(local.team, keys(local.hosts)) : "${pair[0]} on host ${pair[1]}" => { user = pair[0], host = pair[1] } }
}

data "bkiam_access_check" "view" {
  for_each = local.pairs

  system    = local.system
  subject   = { type = "user", id = each.value.user }
  actions   = ["view_host"]
  resources = [{ system = local.system, type = "host", id = each.value.host, paths = local.hosts[each.value.host] }]

  lifecycle {
    postcondition {
      # A conditional (null) answer fails the plan too: "Condition
      # expression must return either true or false, not null".
      condition     = self.all_allowed
      error_message = "Not allowed to view: ${each.key}."
    }
  }
}
