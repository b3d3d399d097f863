# A grade manager that bk_cmdb created through the management API outside
# this configuration (by another team's Terraform, or a script), found by its
# exact name.
data "bkiam_grade_manager" "platform" {
  system = "bk_cmdb"
  name   = "platform"
}

output "platform_grade_manager_id" {
  value = data.bkiam_grade_manager.platform.id
}

output "platform_grade_manager_members" {
  value = data.bkiam_grade_manager.platform.members
}
