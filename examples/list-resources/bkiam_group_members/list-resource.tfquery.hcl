# terraform query (Terraform 1.14+): the members of each group of grade
# manager 12 whose name contains "dev".
list "bkiam_group_members" "platform" {
  provider = bkiam
  config {
    system           = "bk_cmdb"
    grade_manager_id = "12"
    name             = "dev"
  }
}
