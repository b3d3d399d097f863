# For an audit: what alice may do on hosts, however she holds it (her own
# grants, her groups', her department's), as IAM evaluates it.
data "bkiam_effective_permissions" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host", "edit_host", "delete_host"]
}

output "alice_on_hosts" {
  value = {
    for action, p in data.bkiam_effective_permissions.alice.permissions : action => (
      p.any ? "every host" : p.none ? "nothing" : join(", ", flatten(values(p.instances)))
    )
  }
}

output "alice_groups" {
  value = data.bkiam_effective_permissions.alice.groups
}
