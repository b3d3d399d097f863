# One team's access to a set of resource instances: every member gets the
# same actions on the same instances, each through their own grant, so a
# member who leaves the team loses exactly what the team gave them.

resource "bkiam_instance_grant" "member" {
  for_each = toset(var.members)

  system  = var.system
  subject = { type = "user", id = each.key }
  actions = var.actions
  resources = [{
    system    = var.system
    type      = var.resource_type
    instances = var.instances
  }]
  expires_at = var.expires_at
}
