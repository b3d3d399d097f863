output "team_policies" {
  description = "IAM policy IDs per team, member and action."
  value       = { for team, m in module.team : team => m.policies }
}

output "creator_actions" {
  description = "Actions IAM granted to the creators."
  value = {
    nightly_jobs = bkiam_creator_grant.nightly_jobs.granted_actions
    mini_apps    = bkiam_creator_grant.mini_apps.granted_actions
  }
}

output "sre_group_id" {
  description = "IAM's id of the SRE on-call group."
  value       = bkiam_group.sre.id
}
