# The platform team's grade manager in CMDB: Alice and Bob may grant view
# and edit on the hosts of business 2, to anyone, through its user groups.
# IAM keeps a sync group ("platform-admins") holding the grade manager's
# members with its whole scope.
resource "bkiam_grade_manager" "platform" {
  system      = "bk_cmdb"
  name        = "platform"
  description = "The platform team"
  members     = ["alice", "bob"]

  authorization_scopes = [{
    system  = "bk_cmdb"
    actions = ["view_host", "edit_host"]
    resources = [{
      system    = "bk_cmdb"
      type      = "host"
      instances = [{ id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] }]
    }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]

  sync_perm  = true
  group_name = "platform-admins"
}
