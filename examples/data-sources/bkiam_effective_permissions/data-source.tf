# For an audit: what alice may do on hosts, however she holds it (her own
# grants, her groups', her department's), as IAM evaluates it.
data "bkiam_effective_permissions" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host", "edit_host", "delete_host"]
}

# Hosts by id, every host under a business or set (paths, as the web UI
# and CMDB grant), and whether something else (an attribute, a combined
# resource) shows only in the expression.
output "alice_on_hosts" {
  value = {
    for action, p in data.bkiam_effective_permissions.alice.permissions : action => (
      p.any ? "every host" : p.none ? "nothing" : join("; ", compact([
        join(", ", flatten(values(p.instances))),
        join(", ", [for prefix in flatten(values(p.paths)) : "every host under ${prefix}"]),
        p.conditional ? "more: ${p.expression}" : "",
      ]))
    )
  }
}

output "alice_groups" {
  value = data.bkiam_effective_permissions.alice.groups
}
