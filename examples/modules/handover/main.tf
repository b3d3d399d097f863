# A handover (权限交接) as code, in two reviewed applies.
#
# phase = "overlap": the successor joins the leaver's groups until the
# same expiries and gets the leaver's grants. The leaver's side is
# recorded, not changed: a bkiam_user_groups and bkiam_instance_grants of
# the leaver over exactly what they hold (a create over memberships and
# grants IAM already holds changes nothing in IAM). Both hold access.
#
# phase = "complete": the leaver's resources leave the configuration, so
# the apply removes the leaver from exactly those groups and revokes
# exactly those grants. The successor's resources are unchanged.
#
# Each phase is one apply of resources whose state says what IAM holds: an
# apply that fails half way leaves in state what it did not finish, and
# applying again finishes it.

locals {
  overlap = var.phase == "overlap"
}

resource "bkiam_user_groups" "successor" {
  count = length(var.groups) > 0 ? 1 : 0

  system = var.system
  user   = var.successor
  groups = var.groups
}

resource "bkiam_instance_grant" "successor" {
  for_each = var.grants

  system     = var.system
  subject    = { type = "user", id = var.successor }
  actions    = each.value.actions
  resources  = each.value.resources
  expires_at = each.value.expires_at
}

resource "bkiam_user_groups" "leaver" {
  count = local.overlap && length(var.groups) > 0 ? 1 : 0

  system = var.system
  user   = var.leaver
  groups = var.groups
}

resource "bkiam_instance_grant" "leaver" {
  for_each = local.overlap ? var.grants : {}

  system     = var.system
  subject    = { type = "user", id = var.leaver }
  actions    = each.value.actions
  resources  = each.value.resources
  expires_at = each.value.expires_at
}
