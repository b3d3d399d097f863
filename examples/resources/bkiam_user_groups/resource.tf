resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = "platform-people"
  members = ["alice"]
  authorization_scopes = [{
    system    = "bk_cmdb"
    actions   = ["view_host"]
    resources = [{ system = "bk_cmdb", type = "host", instances = [{ id = "*" }] }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "developers" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "people-developers"
}

resource "bkiam_group" "on_call" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "people-on-call"
}

# Dave joins two groups: the developers for good, the on-call rota for 90
# days from the apply, renewed when less than 14 days are left. Her other
# memberships, and the groups' other members, are left as they are.
resource "bkiam_user_groups" "dave" {
  system = "bk_cmdb"
  user   = "dave"
  groups = {
    (bkiam_group.developers.id) = "permanent"
    (bkiam_group.on_call.id)    = "expires_in"
  }
  expires_in   = "90d"
  renew_before = "14d"
}
