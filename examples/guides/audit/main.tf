# An audit of the on-call team's access to their hosts, however IAM
# grants it: their own grants, a group they are in, their department's
# group, a permission template. This configuration only reads IAM.

locals {
  system = "bk_cmdb"
  team   = ["alice", "bob", "carol"]
  hosts  = ["1", "2"]
}

# Every member must be able to view every host: one check per member and
# host (IAM's auth_by_actions answers one set of resources per call).
data "bkiam_access_check" "view" {
  for_each = { for pair in setproduct(local.team, local.hosts) : "${pair[0]} on host ${pair[1]}" => pair }

  system    = local.system
  subject   = { type = "user", id = each.value[0] }
  actions   = ["view_host"]
  resources = [{ system = local.system, type = "host", id = each.value[1] }]
}

check "team_views_its_hosts" {
  assert {
    condition     = alltrue([for c in data.bkiam_access_check.view : c.all_allowed])
    error_message = "Not allowed to view: ${join(", ", sort([for k, c in data.bkiam_access_check.view : k if !c.all_allowed]))}."
  }
}

# No member may delete a host, except as a manager of the system, whom
# IAM allows everything without reading a policy.
data "bkiam_access_check" "delete" {
  for_each = { for pair in setproduct(local.team, local.hosts) : "${pair[0]} on host ${pair[1]}" => pair }

  system    = local.system
  subject   = { type = "user", id = each.value[0] }
  actions   = ["delete_host"]
  resources = [{ system = local.system, type = "host", id = each.value[1] }]
}

check "team_deletes_no_host" {
  assert {
    condition     = !anytrue([for c in data.bkiam_access_check.delete : c.all_allowed && !c.as_manager])
    error_message = "Allowed to delete: ${join(", ", sort([for k, c in data.bkiam_access_check.delete : k if c.all_allowed && !c.as_manager]))}."
  }
}

# The report: what each member may do on hosts, as IAM evaluates it, and
# the groups they are in.
data "bkiam_effective_permissions" "team" {
  for_each = toset(local.team)

  system  = local.system
  user    = each.key
  actions = ["view_host", "edit_host", "delete_host"]
}

output "team_access" {
  description = "user => action => the host ids allowed, or [\"*\"] for every host."
  value = {
    for user, e in data.bkiam_effective_permissions.team : user => {
      for action, p in e.permissions : action => (p.any ? ["*"] : sort(flatten(values(p.instances))))
    }
  }
}

output "team_groups" {
  description = "user => the ids of the groups the user is in."
  value       = { for user, e in data.bkiam_effective_permissions.team : user => e.groups }
}
