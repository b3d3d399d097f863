output "successor_groups" {
  description = "The successor's memberships the module holds: group id => expiry."
  value       = one(bkiam_user_groups.successor[*].groups)
}

output "successor_grants" {
  description = "Grant ID of each of the successor's grants, by the name in grants."
  value       = { for k, g in bkiam_instance_grant.successor : k => g.id }
}

output "leaver_holds" {
  description = "What the module still holds for the leaver, to remove at phase complete: the groups and the names of the grants (empty once complete)."
  value = {
    groups = keys(coalesce(one(bkiam_user_groups.leaver[*].groups), {}))
    grants = keys(bkiam_instance_grant.leaver)
  }
}
