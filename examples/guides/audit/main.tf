# An audit of the on-call team's access to their hosts, however IAM
# grants it: their own grants, a group they are in, their department's
# group, a permission template, every host of a business. This
# configuration only reads IAM.

locals {
  system = "bk_cmdb"
  team   = ["alice", "bob", "carol"]
  # Each host with its topology paths (its ancestors in IAM's form), as
  # CMDB places it: IAM allows a host through a grant of "every host of
  # business 1" only when the check gives the host's path.
  hosts = {
    "1" = ["/biz,1/"]
    "2" = ["/biz,1/"]
  }
  pairs = { for pair in setproduct(local.team, keys(local.hosts)) : "${pair[0]} on host ${pair[1]}" => { user = pair[0], host = pair[1] } }
}

# Every member must be able to view every host: one check per member and
# host (IAM's auth_by_actions answers one set of resources per call).
data "bkiam_access_check" "view" {
  for_each = local.pairs

  system    = local.system
  subject   = { type = "user", id = each.value.user }
  actions   = ["view_host"]
  resources = [{ system = local.system, type = "host", id = each.value.host, paths = local.hosts[each.value.host] }]
}

# "== true", and "!= true" in the message: an answer that depends on what
# the check does not give is null (conditional), which fails this
# assertion and is named, rather than failing the plan.
check "team_views_its_hosts" {
  assert {
    condition = alltrue([for c in data.bkiam_access_check.view : c.all_allowed == true])
    error_message = "Not allowed to view: ${join(", ", sort([
      for k, c in data.bkiam_access_check.view : c.all_allowed == null ? "${k} (conditional)" : k if c.all_allowed != true
    ]))}."
  }
}

# No member may delete a host, except as a manager of the system, whom
# IAM allows everything without reading a policy.
data "bkiam_access_check" "delete" {
  for_each = local.pairs

  system    = local.system
  subject   = { type = "user", id = each.value.user }
  actions   = ["delete_host"]
  resources = [{ system = local.system, type = "host", id = each.value.host, paths = local.hosts[each.value.host] }]
}

# "== false", never !anytrue([...]): anytrue ignores a null, so a
# conditional answer would pass silently.
check "team_deletes_no_host" {
  assert {
    condition = alltrue([for c in data.bkiam_access_check.delete : c.all_allowed == false || c.as_manager])
    error_message = "Allowed to delete: ${join(", ", sort([
      for k, c in data.bkiam_access_check.delete : c.all_allowed == null ? "${k} (conditional)" : k if c.all_allowed != false && !c.as_manager
    ]))}."
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
  description = "user => action => the hosts allowed: \"every host\", host ids, \"under PATH\" for every host under a business or set, and \"more (see the expression)\" for a grant on other attributes."
  value = {
    for user, e in data.bkiam_effective_permissions.team : user => {
      for action, p in e.permissions : action => (p.any ? ["every host"] : concat(
        sort(flatten(values(p.instances))),
        [for prefix in sort(flatten(values(p.paths))) : "under ${prefix}"],
        p.conditional ? ["more (see the expression)"] : [],
      ))
    }
  }
}

output "team_groups" {
  description = "user => the ids of the groups the user is in ([] for none)."
  value       = { for user, e in data.bkiam_effective_permissions.team : user => e.groups }
}
