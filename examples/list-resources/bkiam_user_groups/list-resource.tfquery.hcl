# terraform query (Terraform 1.14+): Alice's and Bob's memberships in the
# groups of grade manager 12, one bkiam_user_groups each. Give it managed
# (as the adoption guide does) to leave out what state already manages.
list "bkiam_user_groups" "people" {
  provider = bkiam
  config {
    system           = "bk_cmdb"
    grade_manager_id = "12"
    users            = ["alice", "bob"]
  }
}
