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

resource "bkiam_group" "developers" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "developers"
}

# Exactly these members: Alice and Carol for good, Bob until mid-2030, and
# everyone in department 1.
resource "bkiam_group_members" "developers" {
  system   = "bk_cmdb"
  group_id = bkiam_group.developers.id
  users = {
    alice = "permanent"
    bob   = "2030-06-30T00:00:00Z"
    carol = "permanent"
  }
  departments = {
    "1" = "permanent"
  }
}

resource "bkiam_group" "contractors" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "contractors"
}

# A rolling membership: Dave is a member for 90 days from the apply, and a
# plan made in the last week of them renews him for 90 more (expires_at
# moves on by 90 days from the recorded date). Alice stays for good.
resource "bkiam_group_members" "contractors" {
  system   = "bk_cmdb"
  group_id = bkiam_group.contractors.id
  users = {
    alice = "permanent"
    dave  = "expires_in"
  }
  expires_in   = "90d"
  renew_before = "7d"
}
