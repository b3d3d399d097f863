# terraform query (Terraform 1.14+): what group 42 holds of bk_cmdb's actions.
list "bkiam_group_permission" "developers" {
  provider = bkiam
  config {
    system   = "bk_cmdb"
    group_id = "42"
  }
}
