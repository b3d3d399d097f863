# A handover (权限交接) as code, in two reviewed applies.
#
# phase = "overlap": the successor joins the leaver's groups until the
# same expiries and gets the leaver's grants. The leaver's side is
# adopted, not written: the root configuration imports what IAM holds for
# the leaver into bkiam_user_groups.leaver[0] and
# bkiam_instance_grant.leaver[KEY] with import blocks (a module cannot
# hold them; see README.md). The plan shows them "will be imported" and,
# where groups or grants differ from what IAM holds, the change to the
# leaver before anything is applied. Both hold access.
#
# phase = "complete": the leaver's resources leave the configuration (and
# the import blocks with them), so the apply removes the leaver from
# exactly the groups and revokes exactly the grants that were imported.
# The successor's resources are unchanged.
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

# Imported, never created: the root's import block names
# module.NAME.bkiam_user_groups.leaver[0].
resource "bkiam_user_groups" "leaver" {
  count = local.overlap && length(var.groups) > 0 ? 1 : 0

  system = var.system
  user   = var.leaver
  groups = var.groups
}

# Imported, never created: an import block per key of grants,
# module.NAME.bkiam_instance_grant.leaver["KEY"].
resource "bkiam_instance_grant" "leaver" {
  for_each = local.overlap ? var.grants : {}

  system     = var.system
  subject    = { type = "user", id = var.leaver }
  actions    = each.value.actions
  resources  = each.value.resources
  expires_at = each.value.expires_at
}
