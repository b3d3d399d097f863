# A group made outside this configuration, found by its exact name among
# the groups of a grade manager, itself found by name.
data "bkiam_grade_manager" "platform" {
  system = "bk_cmdb"
  name   = "platform"
}

data "bkiam_group" "developers" {
  system           = "bk_cmdb"
  grade_manager_id = data.bkiam_grade_manager.platform.id
  name             = "developers"
}

output "developers_group_id" {
  value = data.bkiam_group.developers.id
}
