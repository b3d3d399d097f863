# terraform query (Terraform 1.14+): the groups of grade manager 12.
list "bkiam_group" "platform" {
  provider = bkiam
  config {
    system           = "bk_cmdb"
    grade_manager_id = "12"
  }
}
