resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = "platform"
  members = ["alice"]
  authorization_scopes = [{
    system    = "bk_cmdb"
    actions   = ["view_host"]
    resources = [{ system = "bk_cmdb", type = "host", instances = [{ id = "*" }] }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

# One group per team, under the platform grade manager.
resource "bkiam_group" "team" {
  for_each = {
    developers = "Application developers"
    operators  = "On-call operators"
  }
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = each.key
  description      = each.value
}
