# A group made outside this configuration, found by its exact name among
# the groups of a grade manager.
variable "grade_manager_id" {
  description = "The grade manager whose group to find."
  type        = string
}

data "bkiam_group" "developers" {
  system           = "bk_cmdb"
  grade_manager_id = var.grade_manager_id
  name             = "developers"
}

output "developers_group_id" {
  value = data.bkiam_group.developers.id
}
