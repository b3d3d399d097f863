output "grant_ids" {
  description = "Grant ID of each member."
  value       = { for user, g in bkiam_instance_grant.member : user => g.id }
}

output "policies" {
  description = "IAM policy IDs of each member: username => action => policy ID."
  value       = { for user, g in bkiam_instance_grant.member : user => g.policies }
}
